"""Sub-agents as child sessions, through the real process on the real Anthropic SDK (a
scripted Messages API), with raw frames each checked against the newest (unstable) schema
file: two sub-agents started in one response run at once, each announced with
`subagent_update` before any of its traffic, their messages addressed to their own ids;
the parent goes on with both answers. A client without `clientCapabilities.subagents`
sees none of it: one tool call per sub-agent, with progress lines."""

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import anthropic_env
from tests.support.raw_acp import RawClient, raw_client
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

SUBAGENTS: dict[str, Any] = {"subagents": {}}


def script(server: ScriptedAnthropic, release: threading.Event) -> None:
    server.script(
        stream(
            tool_use("agent", {"prompt": "Where is alpha?", "description": "alpha"}, id="toolu_a"),
            tool_use("agent", {"prompt": "Where is beta?", "description": "beta"}, id="toolu_b"),
            stop_reason="tool_use",
        ),
        # Whichever child asks first hangs until the other child has asked too.
        stream(HANG, text("answer one"), release=release, input_tokens=7, output_tokens=3),
        stream(text("answer two"), input_tokens=5, output_tokens=2),
        stream(text("Both sub-agents answered.")),
    )


async def prompt_with_overlap(
    client: RawClient, session_id: str, server: ScriptedAnthropic, release: threading.Event
) -> dict[str, Any]:
    asked = await client.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "find both"}]},
    )
    reading = asyncio.ensure_future(allowing_until(client, asked))
    # Both children's first requests are in while one of them is still being answered:
    # they run at once (one after the other would never get here).
    await asyncio.to_thread(server.wait_for_hang, 1)
    await asyncio.to_thread(server.wait_for_requests, 3)
    release.set()
    return await reading


async def allowing_until(client: RawClient, id_: int) -> dict[str, Any]:
    """Read until the answer to `id_`, allowing each sub-agent start the user is asked
    about (starting one asks, as a command does)."""
    return await allowing(client, lambda m: m.get("id") == id_ and "method" not in m)


async def allowing(client: RawClient, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Read until a message `until` picks (returned), allowing sub-agent starts meanwhile."""
    while True:
        message = await client.next_message()
        if message.get("method") == "session/request_permission":
            assert message["params"]["toolCall"]["toolCallId"] in ("toolu_a", "toolu_b")
            outcome = {"outcome": "selected", "optionId": "allow_once"}
            await client.send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
            )
        elif until(message):
            return message


def frames_of(client: RawClient) -> list[dict[str, Any]]:
    return [m["params"] for m in client.received if m.get("method") == "session/update"]


async def test_two_subagents_run_at_once_as_announced_child_sessions(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    script(server, release)
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        parent = await client.open(workdir, SUBAGENTS)
        answer = await prompt_with_overlap(client, parent, server, release)

    assert answer["result"]["stopReason"] == "end_turn"
    server.assert_script_consumed()
    frames = frames_of(client)
    announced = [
        f["update"]
        for f in frames
        if f["sessionId"] == parent and f["update"]["sessionUpdate"] == "subagent_update"
    ]
    children = list(dict.fromkeys(u["sessionId"] for u in announced))
    assert len(children) == 2 and parent not in children
    for child in children:
        positions = [i for i, f in enumerate(frames) if child in _named(f)]
        first = frames[positions[0]]
        assert first["sessionId"] == parent  # announced on the parent ...
        assert first["update"]["sessionUpdate"] == "subagent_update"  # ... before its traffic
        assert first["update"]["state"] == {"state": "running"}
        own = [f["update"] for f in frames if f["sessionId"] == child]
        assert own[0]["sessionUpdate"] == "session_message"  # the task, from the parent
        assert own[0]["senderSessionId"] == parent
        [said] = [u for u in own if u["sessionUpdate"] == "agent_message_chunk"]
        last = [u for u in announced if u["sessionId"] == child][-1]
        assert last["state"]["state"] == "idle" and last["state"]["stopReason"] == "end_turn"
        assert last["state"]["usage"]["totalTokens"] > 0
        replies = [
            u
            for u in (f["update"] for f in frames if f["sessionId"] == parent)
            if u["sessionUpdate"] == "session_message" and u["senderSessionId"] == child
        ]
        assert [r["content"][0]["text"] for r in replies] == [said["content"]["text"]]
    titles = {u["title"] for u in announced if "title" in u}
    assert titles == {"alpha", "beta"}
    # The parent's next request has both answers as the two calls' results.
    results = {
        block["tool_use_id"]: block["content"]
        for block in server.requests[3].messages[-1]["content"]
        if block.get("type") == "tool_result"
    }
    assert set(results) == {"toolu_a", "toolu_b"}
    assert sorted(_text(c) for c in results.values()) == ["answer one", "answer two"]

    # Another process loads the parent: each child is announced again (in its final
    # state) after the call that started it, with its answer; not to a plain client.
    live_ends = {u["sessionId"]: u["state"] for u in announced}
    for capabilities in (SUBAGENTS, {}):
        async with raw_client(env, workdir, which="unstable") as again:
            await again.call(
                "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
            )
            loaded = await again.call(
                "session/load", {"sessionId": parent, "cwd": str(workdir), "mcpServers": []}
            )
        assert "result" in loaded, loaded
        replay = [f["update"] for f in frames_of(again)]
        kinds = [u["sessionUpdate"] for u in replay]
        if not capabilities:
            assert "subagent_update" not in kinds and "session_message" not in kinds
            continue
        replayed = [u for u in replay if u["sessionUpdate"] == "subagent_update"]
        assert {u["sessionId"]: u["state"] for u in replayed} == live_ends
        for update in replayed:
            started = replay.index(
                next(
                    u
                    for u in replay
                    if u["sessionUpdate"] == "tool_call"
                    and u["toolCallId"] == update["_meta"]["iac_code"]["toolCallId"]
                )
            )
            assert started < replay.index(update)
        answers = [u for u in replay if u["sessionUpdate"] == "session_message"]
        assert {a["senderSessionId"] for a in answers} == set(children)


async def test_without_the_capability_a_subagent_is_one_tool_call_with_progress(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    script(server, release)
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        parent = await client.open(workdir, {})
        answer = await prompt_with_overlap(client, parent, server, release)

    assert answer["result"]["stopReason"] == "end_turn"
    frames = frames_of(client)
    assert {f["sessionId"] for f in frames} == {parent}
    kinds = {f["update"]["sessionUpdate"] for f in frames}
    assert not kinds & {"subagent_update", "session_message", "session_message_chunk"}
    for call in ("toolu_a", "toolu_b"):
        updates = [
            f["update"]
            for f in frames
            if f["update"].get("toolCallId") == call
            and f["update"]["sessionUpdate"] == "tool_call_update"
        ]
        assert updates[-1]["status"] == "completed"
        # Its content ends as the progress lines, then the answer (live updates before it
        # showed the lines so far; a slow reader may get them merged into this one).
        texts = [c["content"]["text"] for c in updates[-1].get("content") or []]
        assert len(texts) == 1, updates
        lines = texts[0].splitlines()
        assert lines[0].startswith("Sub-agent ") and lines[0].endswith((": alpha", ": beta"))
        assert lines[-3].startswith("Sub-agent done (")
        assert lines[-1] in ("answer one", "answer two")


def _is_announcement(message: dict[str, Any]) -> bool:
    params = message.get("params") or {}
    update = params.get("update") or {}
    return message.get("method") == "session/update" and (
        update.get("sessionUpdate") == "subagent_update"
    )


def _named(params: dict[str, Any]) -> set[str]:
    """The session ids a frame names: its own, and the child an update is about."""
    update = params["update"]
    names = {params["sessionId"]}
    for key in ("sessionId", "senderSessionId", "recipientSessionId"):
        if isinstance(update.get(key), str):
            names.add(update[key])
    return names


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def hanging_children(server: ScriptedAnthropic, release: threading.Event) -> None:
    server.script(
        stream(
            tool_use("agent", {"prompt": "Where is alpha?", "description": "alpha"}, id="toolu_a"),
            tool_use("agent", {"prompt": "Where is beta?", "description": "beta"}, id="toolu_b"),
            stop_reason="tool_use",
        ),
        stream(HANG, text("never"), release=release),
        stream(HANG, text("never"), release=release),
    )


async def started_children(
    client: RawClient, session_id: str, server: ScriptedAnthropic
) -> tuple[int, "asyncio.Future[dict[str, Any]]"]:
    """The prompt sent, both children hanging at the API; the reader still reading."""
    asked = await client.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "find both"}]},
    )
    reading = asyncio.ensure_future(allowing_until(client, asked))
    await asyncio.to_thread(server.wait_for_hang, 2)
    return asked, reading


def child_ends(client: RawClient, parent: str) -> dict[str, dict[str, Any]]:
    """Each child's last announced state."""
    ends: dict[str, dict[str, Any]] = {}
    for f in frames_of(client):
        update = f["update"]
        if f["sessionId"] == parent and update["sessionUpdate"] == "subagent_update":
            ends[update["sessionId"]] = update
    return ends


async def test_cancelling_the_parent_cancels_its_children(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    hanging_children(server, release)
    env = {**base_env, **anthropic_env(server)}
    try:
        async with raw_client(env, workdir, which="unstable") as client:
            parent = await client.open(workdir, SUBAGENTS)
            _, reading = await started_children(client, parent, server)
            await client.send(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": parent}}
            )
            answer = await reading
    finally:
        release.set()

    assert "result" in answer, answer
    assert answer["result"]["stopReason"] == "cancelled"
    ends = child_ends(client, parent)
    assert len(ends) == 2
    for end in ends.values():
        assert end["state"] == {
            "state": "idle",
            "stopReason": "cancelled",
            "usage": end["state"]["usage"],
        }
        assert end["capabilities"] is None  # nothing more to do to it


async def test_one_child_cancelled_alone_and_the_parent_goes_on(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    server.script(
        stream(
            tool_use("agent", {"prompt": "Where is alpha?", "description": "alpha"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(HANG, text("never"), release=release),
        stream(text("The sub-agent was stopped.")),
    )
    env = {**base_env, **anthropic_env(server)}
    try:
        async with raw_client(env, workdir, which="unstable") as client:
            parent = await client.open(workdir, SUBAGENTS)
            asked = await client.request(
                "session/prompt",
                {"sessionId": parent, "prompt": [{"type": "text", "text": "find it"}]},
            )
            announced = await allowing(client, _is_announcement)
            await asyncio.to_thread(server.wait_for_hang, 1)  # the child is at work
            reading = asyncio.ensure_future(allowing_until(client, asked))
            started = announced["params"]["update"]
            child = started["sessionId"]
            assert started["capabilities"] == {"cancel": {}}  # advertised per child
            await client.send(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": child}}
            )
            answer = await reading
    finally:
        release.set()

    assert answer["result"]["stopReason"] == "end_turn"  # the parent went on
    assert child_ends(client, parent)[child]["state"]["stopReason"] == "cancelled"
    [result] = [
        block
        for block in server.requests[2].messages[-1]["content"]
        if block.get("type") == "tool_result"
    ]
    assert result["is_error"] is True
    assert "cancelled this sub-agent" in _text(result["content"])
