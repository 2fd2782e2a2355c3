"""Rewind (ACP's session-rewind proposal, served as `_iac_code/session/rewind`): the real
process, the official client, a scripted Messages API. The pinned SDK has no such method,
so the rewind and its undo are sent as raw requests; every message of each run is
validated against the newest (unstable) schema file."""

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env, until
from tests.e2e.test_stdio_raw import raw_agent
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text

pytestmark = pytest.mark.e2e

REWIND = "_iac_code/session/rewind"
UNDO = "_iac_code/session/rewind_undo"


def valid_on_the_wire(agent: Agent) -> None:
    validator = SchemaFileValidator(which="unstable")
    for sender, message in agent.raw:
        validator.check(sender, message)
    validator.assert_clean()


async def call(agent: Agent, method: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await agent.conn._conn.send_request(method, params)
    return result


async def prompt(agent: Agent, server: ScriptedAnthropic, sid: str, words: str) -> None:
    server.script(stream(text(f"re: {words}"), input_tokens=5, output_tokens=2))
    await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])


async def transcript(agent: Agent, sid: str, workdir: Path) -> list[tuple[str, str, str]]:
    """The session as a load replays it: (kind, messageId, text) of each chunk."""
    before = len(agent.client.updates)
    await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
    return [
        (u.session_update, u.message_id, u.content.text)
        for _, u in agent.client.updates[before:]
        if u.session_update in ("user_message_chunk", "agent_message_chunk")
    ]


def prompt_id(shown: list[tuple[str, str, str]], words: str) -> str:
    return next(mid for kind, mid, said in shown if kind == "user_message_chunk" and said == words)


def rewind_updates(agent: Agent) -> list[dict[str, Any]]:
    """The `_meta.iac_code` of each session_info_update that told a rewind or its undo."""
    metas = [
        m["params"]["update"].get("_meta", {}).get("iac_code", {})
        for m in agent.sent_by_agent("session/update")
        if m["params"]["update"]["sessionUpdate"] == "session_info_update"
    ]
    return [m for m in metas if "rewound" in m or "rewindUndone" in m]


def said(request_messages: list[dict[str, Any]]) -> list[str]:
    """The text of each message the model was sent."""
    return [
        "".join(b["text"] for b in m["content"] if b.get("type") == "text")
        if isinstance(m["content"], list)
        else m["content"]
        for m in request_messages
    ]


async def test_rewind_cuts_the_history_undo_brings_it_back_and_a_restart_keeps_the_cut(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    env = anthropic_env(server)
    async with spawn(env) as first:
        await first.initialize()
        sid = (await first.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        for words in ("one", "two", "three"):
            await prompt(first, server, sid, words)
        shown = await transcript(first, sid, workdir)
        second_prompt = prompt_id(shown, "two")

        rewound = await call(first, REWIND, sessionId=sid, toMessageId=second_prompt)
        assert rewound["messageCount"] == 2
        assert rewind_updates(first) == [
            {"rewound": {"toMessageId": second_prompt, "messageCount": 2}}
        ]
        assert [said for _, _, said in await transcript(first, sid, workdir)] == [
            "one",
            "re: one",
        ]

        undone = await call(first, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert undone == {"messageCount": 6}
        assert rewind_updates(first)[-1] == {
            "rewindUndone": {"toMessageId": second_prompt, "messageCount": 6}
        }
        # The undo replays what came back, as a load shows it.
        await until(lambda: first.client.agent_text().endswith("re: onere: twore: three"), first)
        assert await transcript(first, sid, workdir) == shown
        with pytest.raises(RequestError) as twice:
            await call(first, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert twice.value.code == -32602

        await call(first, REWIND, sessionId=sid, toMessageId=second_prompt)
        first.kill()
    valid_on_the_wire(first)

    async with spawn(env) as second:
        await second.initialize()
        assert [said for _, _, said in await transcript(second, sid, workdir)] == [
            "one",
            "re: one",
        ]
        await prompt(second, server, sid, "two, said again")
        assert said(server.requests[-1].messages) == ["one", "re: one", "two, said again"]
    valid_on_the_wire(second)


async def test_bad_rewinds_are_refused_and_a_prompt_ends_the_undo(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await prompt(agent, server, sid, "one")
        await prompt(agent, server, sid, "two")
        shown = await transcript(agent, sid, workdir)
        reply_id = next(mid for kind, mid, _ in shown if kind == "agent_message_chunk")
        refused = [
            {"sessionId": sid, "toMessageId": "no-such-message"},
            {"sessionId": sid, "toMessageId": reply_id},  # not a prompt the user sent
            {"sessionId": sid, "toMessageId": prompt_id(shown, "two"), "files": "sideways"},
            {
                "sessionId": sid,
                "toMessageId": prompt_id(shown, "two"),
                "files": "restore",
                "force": True,
                "skip": True,
            },
            {"sessionId": sid},
            {"sessionId": "no-such-session", "toMessageId": reply_id},
        ]
        for params in refused:
            with pytest.raises(RequestError) as error:
                await call(agent, REWIND, **params)
            assert error.value.code == -32602, params
        assert error.value.data is not None
        assert [said for _, _, said in await transcript(agent, sid, workdir)] == [
            "one",
            "re: one",
            "two",
            "re: two",
        ]

        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=prompt_id(shown, "two"))
        await prompt(agent, server, sid, "another two")
        with pytest.raises(RequestError) as late:
            await call(agent, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert late.value.code == -32602
        assert "prompted since" in str(late.value)
    valid_on_the_wire(agent)


async def test_the_capability_is_advertised_and_the_proposal_name_is_served(
    tmp_path: Path, workdir: Path
) -> None:
    async with raw_agent(tmp_path, workdir) as raw:
        reply = await raw.call(0, "initialize", {"protocolVersion": 1})
        assert reply["result"]["agentCapabilities"]["_meta"]["iac_code"]["rewind"] == {
            "method": REWIND,
            "alias": "session/rewind",
            "undoMethod": UNDO,
            "editPromptMethod": "_iac_code/session/edit_prompt",
            "files": ["keep", "restore"],
            "resolve": ["force", "skip"],
            "forkAt": "_meta.iac_code.atMessageId",
        }
        sid = (await raw.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []}))["result"][
            "sessionId"
        ]
        hello = [{"type": "text", "text": "hi"}]
        await raw.call(2, "session/prompt", {"sessionId": sid, "prompt": hello})
        opening = {"sessionId": sid, "cwd": str(workdir), "mcpServers": []}
        await raw.call(3, "session/load", opening)
        ids = [
            update["messageId"]
            for line in raw.lines
            if (update := _update(line)) and update["sessionUpdate"] == "user_message_chunk"
        ]
        edit = {"sessionId": sid, "messageId": ids[0], "prompt": [{"type": "text", "text": "yo"}]}
        edited = await raw.call(4, "session/edit_prompt", edit)
        assert edited["result"]["stopReason"] == "end_turn"
        before = len(raw.lines)
        await raw.call(5, "session/load", opening)
        ids = [
            update["messageId"]
            for line in raw.lines[before:]
            if (update := _update(line)) and update["sessionUpdate"] == "user_message_chunk"
        ]
        assert len(set(ids)) == 1
        answer = await raw.call(6, "session/rewind", {"sessionId": sid, "toMessageId": ids[0]})
        assert answer["result"]["messageCount"] == 0


def _update(line: bytes) -> dict[str, Any] | None:
    message = json.loads(line)
    update: dict[str, Any] | None = message.get("params", {}).get("update")
    return update


async def test_a_fork_at_a_prompt_holds_the_history_before_it(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        for words in ("one", "two"):
            await prompt(agent, server, sid, words)
        shown = await transcript(agent, sid, workdir)
        at = {"iac_code": {"atMessageId": prompt_id(shown, "two")}}
        forked = await call(
            agent, "session/fork", sessionId=sid, cwd=str(workdir), mcpServers=[], _meta=at
        )
        fork = forked["sessionId"]
        assert [said for _, _, said in await transcript(agent, fork, workdir)] == [
            "one",
            "re: one",
        ]
        await prompt(agent, server, fork, "two, otherwise")
        assert said(server.requests[-1].messages) == ["one", "re: one", "two, otherwise"]
        assert await transcript(agent, sid, workdir) == shown  # the source is as it was
        with pytest.raises(RequestError) as error:
            await call(
                agent,
                "session/fork",
                sessionId=sid,
                cwd=str(workdir),
                mcpServers=[],
                _meta={"iac_code": {"atMessageId": "no-such-message"}},
            )
        assert error.value.code == -32602
    valid_on_the_wire(agent)


async def test_edit_prompt_runs_the_new_text_on_the_history_before_the_old_one(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        for words in ("one", "two", "three"):
            await prompt(agent, server, sid, words)
        shown = await transcript(agent, sid, workdir)
        server.script(stream(text("re: TWO"), input_tokens=5, output_tokens=2))
        answer = await call(
            agent,
            "_iac_code/session/edit_prompt",
            sessionId=sid,
            messageId=prompt_id(shown, "two"),
            prompt=[{"type": "text", "text": "TWO"}],
        )
        assert answer["stopReason"] == "end_turn"
        assert said(server.requests[-1].messages) == ["one", "re: one", "TWO"]
        assert [said for _, _, said in await transcript(agent, sid, workdir)] == [
            "one",
            "re: one",
            "TWO",
            "re: TWO",
        ]
        with pytest.raises(RequestError) as error:  # the old prompt is gone now
            await call(
                agent,
                "_iac_code/session/edit_prompt",
                sessionId=sid,
                messageId=prompt_id(shown, "three"),
                prompt=[{"type": "text", "text": "THREE"}],
            )
        assert error.value.code == -32602
        assert len(server.requests) == 4
    valid_on_the_wire(agent)


async def test_a_rewind_while_a_turn_runs_is_busy_and_changes_nothing(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await prompt(agent, server, sid, "one")
        shown = await transcript(agent, sid, workdir)
        server.script(stream(text("half "), HANG, text("whole"), release=release))
        running = asyncio.ensure_future(
            agent.conn.prompt(session_id=sid, prompt=[text_block("two")])
        )
        await asyncio.to_thread(server.wait_for_hang)
        with pytest.raises(RequestError) as busy:
            await call(agent, REWIND, sessionId=sid, toMessageId=prompt_id(shown, "one"))
        assert busy.value.code == -32602
        assert "already running" in str(busy.value)
        release.set()
        assert (await running).stop_reason == "end_turn"
        assert [said for _, _, said in await transcript(agent, sid, workdir)] == [
            "one",
            "re: one",
            "two",
            "half whole",
        ]
    valid_on_the_wire(agent)
