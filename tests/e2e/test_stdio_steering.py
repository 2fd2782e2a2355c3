"""Steering over stdio (`_session/steering`), with the official client: a message sent while
the agent works reaches the model's next request at a safe point, is shown live, stored
where it was delivered, and every answer says truthfully what became of it."""

import asyncio
import json
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from tests.e2e.conftest import DEMO, Agent, RecordingClient, Spawn, anthropic_env, until
from tests.support.patience import PATIENCE
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text, tool_use
from tests.support.wire_validator import AGENT

pytestmark = pytest.mark.e2e


async def steer(agent: Agent, session_id: str, words: str, **extra: Any) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": words}], **extra}
    answer: dict[str, Any] = await agent.conn.ext_method("session/steering", params)
    return answer


def waiting_counts(agent: Agent) -> list[int]:
    """What `_meta.iac_code.steering.waiting` said, in order."""
    counts = []
    for message in agent.sent_by_agent("session/update"):
        meta = message["params"]["update"].get("_meta") or {}
        steering = (meta.get("iac_code") or {}).get("steering")
        if steering is not None:
            counts.append(steering["waiting"])
    return counts


def user_chunks(client: RecordingClient) -> list[tuple[str | None, str]]:
    return [
        (u.message_id, u.content.text)
        for _, u in client.updates
        if u.session_update == "user_message_chunk"
    ]


def replayed(client: RecordingClient) -> list[tuple[str, str]]:
    """The conversation a load replayed: (who, text), a message's chunks joined."""
    said: list[tuple[str, str]] = []
    for _, update in client.updates:
        kind = {"user_message_chunk": "user", "agent_message_chunk": "agent"}.get(
            update.session_update
        )
        if kind is None:
            continue
        if said and said[-1][0] == kind:
            said[-1] = (kind, said[-1][1] + update.content.text)
        else:
            said.append((kind, update.content.text))
    return said


def assert_schema_clean(agent: Agent) -> None:
    """Every message of the run, against the newest schema file."""
    schema = SchemaFileValidator(which="stable")
    for sender, message in agent.raw:
        schema.check(sender, json.loads(json.dumps(message)))
    schema.assert_clean()


async def test_a_steer_during_a_streaming_reply_joins_the_turn_and_is_replayed_there(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    server.script(
        stream(text("Working"), HANG, text(" on it"), release=release),
        stream(text("Tests added too")),
    )
    async with spawn(anthropic_env(server)) as agent:
        init = await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("code")]))
        await asyncio.to_thread(server.wait_for_hang)
        answer = asyncio.create_task(steer(agent, sid, "also add tests"))
        await until(lambda: waiting_counts(agent) == [1], agent)  # it waits for the turn
        release.set()
        steered = await asyncio.wait_for(answer, PATIENCE)
        done = await asyncio.wait_for(prompt, PATIENCE)
        live = user_chunks(agent.client)
        assert_schema_clean(agent)
    async with spawn(anthropic_env(server)) as again:
        await again.initialize()
        await again.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert_schema_clean(again)

    meta = init.agent_capabilities.field_meta
    assert meta["steering"] == {"supported": True}
    assert meta["iac_code"]["steering"]["defaultIdleBehavior"] == "startNewTurn"
    assert steered["outcome"] == "injected"
    assert done.stop_reason == "end_turn"  # one turn, which took the message
    message_id = steered["_meta"]["iac_code"]["messageId"]
    assert live == [(message_id, "also add tests")]
    assert waiting_counts(agent) == [1, 0]
    # The model's next request: the finished reply, then the message, as the user's.
    roles = [m["role"] for m in server.requests[1].messages]
    assert roles == ["user", "assistant", "user"]
    assert server.requests[1].messages[2]["content"] == [{"type": "text", "text": "also add tests"}]
    assert replayed(again.client) == [
        ("user", "code"),
        ("agent", "Working on it"),
        ("user", "also add tests"),
        ("agent", "Tests added too"),
    ]
    server.assert_script_consumed()


@dataclass
class HoldingClient(RecordingClient):
    """Holds each permission request until `release` is set, then allows it once."""

    asked: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.set()
        await self.release.wait()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )


async def test_a_steer_during_a_tool_call_reaches_the_model_after_the_tool_result(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(tool_use("bash", {"command": "echo hi"}, id="toolu_s1"), stop_reason="tool_use"),
        stream(text("It printed hi.")),
    )
    client = HoldingClient()
    async with spawn(anthropic_env(server), client=client) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        prompt = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block("run echo hi")])
        )
        await asyncio.wait_for(client.asked.wait(), PATIENCE)  # the tool call is under way
        answer = asyncio.create_task(steer(agent, sid, "then summarise"))
        await until(lambda: waiting_counts(agent) == [1], agent)
        client.release.set()
        steered = await asyncio.wait_for(answer, PATIENCE)
        assert (await asyncio.wait_for(prompt, PATIENCE)).stop_reason == "end_turn"
        assert_schema_clean(agent)

    assert steered["outcome"] == "injected"
    last = server.requests[1].messages[-1]
    assert last["role"] == "user"
    # The tool's result first (its use and result stay a pair), then the message.
    assert last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["tool_use_id"] == "toolu_s1"
    assert last["content"][-1] == {"type": "text", "text": "then summarise"}


async def test_on_an_idle_session_a_steer_starts_a_turn_or_is_refused(
    spawn: Spawn, workdir: Path
) -> None:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        refused = await steer(agent, sid, "help", idleBehavior="fail")
        started = await steer(agent, sid, "help")
        await until(lambda: "It understands" in agent.client.agent_text(), agent)
        with pytest.raises(RequestError) as bad:
            await steer(agent, sid, "x", idleBehavior="later")
        with pytest.raises(RequestError) as unknown:
            await steer(agent, "sess_nope", "x")
        with pytest.raises(RequestError) as empty:
            await agent.conn.ext_method("session/steering", {"sessionId": sid, "prompt": []})
        assert_schema_clean(agent)

    assert started == {"outcome": "startedNewTurn"}
    assert refused["outcome"] == "failed" and "idleBehavior: fail" in refused["reason"]
    assert bad.value.code == -32602
    assert bad.value.data["field"] == "idleBehavior"
    assert bad.value.data["allowed"] == ["startNewTurn", "fail"]
    assert unknown.value.code == -32602 and unknown.value.data["sessionId"] == "sess_nope"
    assert empty.value.code == -32602 and empty.value.data["field"] == "prompt"
    assert user_chunks(agent.client) == []  # a turn's own prompt is not echoed live
    assert agent.client.agent_text().count("It understands") == 1  # refused: no turn ran


async def test_fifty_steers_around_turn_ends_are_each_delivered_once_and_answered_truly(
    spawn: Spawn, workdir: Path
) -> None:
    """The demo model answers at once, so turns end all the time while steers arrive: each
    is answered injected (shown live with its id) or startedNewTurn (a turn's prompt), none
    failed, and a load shows each exactly once."""
    env = {**DEMO, "IAC_CODE_MAX_TURN_REQUESTS": "500"}
    words = [f"steer {n:02d}" for n in range(50)]
    jitter = random.Random(28)
    async with spawn(env) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("hi")]))
        sent = []
        for said in words:
            sent.append(asyncio.create_task(steer(agent, sid, said)))
            # Random moments, not a synchronisation: the turns run and end meanwhile.
            await asyncio.sleep(jitter.random() * 0.06)
        answers = await asyncio.wait_for(asyncio.gather(*sent), PATIENCE)
        await asyncio.wait_for(first, PATIENCE)
        # Every message reached the model: the demo says back what it was told.
        await until(lambda: all(w in agent.client.agent_text() for w in words), agent)
        live = user_chunks(agent.client)
        assert_schema_clean(agent)
    async with spawn(env) as again:
        await again.initialize()
        await again.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])

    outcomes = {a["outcome"] for a in answers}
    assert outcomes <= {"injected", "startedNewTurn"}
    for said, answer in zip(words, answers, strict=True):
        shown = [mid for mid, chunk in live if chunk == said]
        if answer["outcome"] == "injected":
            assert shown == [answer["_meta"]["iac_code"]["messageId"]], said
        else:
            assert shown == [], said  # it was a new turn's prompt
    stored = [t for who, t in replayed(again.client) if who == "user"]
    for said in words:
        assert sum(t.count(said) for t in stored) == 1, said
    assert not [m for s, m in again.raw if s == AGENT and "error" in m]
