"""The offline demo model through the real process and the official client: tools,
permission requests and cancel work without an API key."""

import asyncio
from pathlib import Path

import pytest
from acp import text_block

from adapters.llm.demo import tokens
from adapters.llm.demo_script import next_step
from domain.content import TextBlock
from tests.e2e.conftest import DEMO, Agent, Spawn, until
from tests.factories import MessageFactory

pytestmark = pytest.mark.e2e

FIRST_CALL = "toolu_demo_001"


async def start(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
    return session.session_id


def full_reply(request: str) -> str:
    """What the demo answers to `request` as the first prompt of a session."""
    return next_step([MessageFactory.build(content=(TextBlock(text=request),))], ()).text


async def test_list_files_calls_the_tool_and_describes_the_result(
    spawn: Spawn, workdir: Path
) -> None:
    (workdir / "app.py").write_text("print('hi')\n")
    async with spawn(DEMO) as agent:
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("list files")])
    assert result.stop_reason == "end_turn"
    assert agent.client.permission_requests == []  # a read inside cwd needs no permission
    first, filled, *rest = agent.client.tool_updates(FIRST_CALL)
    # Shown as the model starts the call, then filled in once its input is complete.
    assert (first.session_update, first.kind, first.title) == ("tool_call", "read", "list_files")
    assert (filled.session_update, filled.title) == ("tool_call_update", "List .")
    assert rest[-1].status == "completed"
    assert "app.py" in rest[-1].content[0].content.text
    said = agent.client.agent_text()
    assert said.startswith("I'll list the files in the working directory.")
    assert said.endswith("`.` holds 1 entry: `app.py`.")
    kinds = agent.client.kinds()
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")


async def test_create_asks_permission_and_writes_when_allowed(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(
            session_id=sid, prompt=[text_block("create notes.txt with hello")]
        )
    assert result.stop_reason == "end_turn"
    [(asked, _options)] = agent.client.permission_requests
    assert asked.tool_call_id == FIRST_CALL
    assert asked.raw_input == {"path": "notes.txt", "content": "hello"}
    assert len(agent.sent_by_agent("session/request_permission")) == 1
    assert (workdir / "notes.txt").read_text() == "hello"
    assert agent.client.tool_updates(FIRST_CALL)[-1].status == "completed"
    assert f"Done. Created {workdir / 'notes.txt'} (5 bytes)." in agent.client.agent_text()


async def test_a_rejected_write_is_acknowledged_and_nothing_is_written(
    spawn: Spawn, workdir: Path
) -> None:
    async with spawn(DEMO) as agent:
        agent.client.answers = ["reject_once"]
        sid = await start(agent, workdir)
        result = await agent.conn.prompt(
            session_id=sid, prompt=[text_block("create notes.txt with hello")]
        )
    assert result.stop_reason == "end_turn"
    assert not (workdir / "notes.txt").exists()
    assert agent.client.tool_updates(FIRST_CALL)[-1].status == "failed"
    assert "you declined, so I did not write notes.txt" in agent.client.agent_text()


async def test_cancel_stops_a_slow_demo_reply_mid_stream(spawn: Spawn, workdir: Path) -> None:
    request = "plan a migration of the session store from SQLite to PostgreSQL"
    full = full_reply(request)
    # A slow pace: the whole plan takes many seconds, so the cancel sent after the first
    # chunk lands mid-stream however loaded the machine is.
    async with spawn({**DEMO, "IAC_CODE_DEMO_PACE": "10"}) as agent:
        sid = await start(agent, workdir)
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block(request)])
        )
        await until(lambda: agent.client.agent_text() != "", agent)
        await agent.conn.cancel(session_id=sid)
        result = await asyncio.wait_for(prompt, 30)
        seen = agent.client.agent_text()
    assert result.stop_reason == "cancelled"
    assert seen and full.startswith(seen) and seen != full  # cut short, not finished


async def test_finding_16_a_cancelled_turn_reports_the_tokens_it_streamed(
    spawn: Spawn, workdir: Path
) -> None:
    """The demo streams one token a chunk; what streamed before the cancel is the turn's
    output, not zero."""
    request = "plan a migration of the session store from SQLite to PostgreSQL"
    step = next_step([MessageFactory.build(content=(TextBlock(text=request),))], ())
    whole = len(tokens(step.thinking)) + len(tokens(step.text))
    async with spawn({**DEMO, "IAC_CODE_DEMO_PACE": "10"}) as agent:
        sid = await start(agent, workdir)
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block(request)])
        )
        await until(lambda: agent.client.agent_text() != "", agent)
        await agent.conn.cancel(session_id=sid)
        result = await asyncio.wait_for(prompt, 30)
        thought = "".join(
            u.content.text
            for _, u in agent.client.updates
            if u.session_update == "agent_thought_chunk"
        )
        seen = len(tokens(thought)) + len(tokens(agent.client.agent_text()))
    assert result.stop_reason == "cancelled"
    assert result.usage is not None
    # Every token shown was counted; at most the one in flight at the cancel was not shown.
    assert seen <= result.usage.output_tokens <= min(seen + 1, whole - 1)
