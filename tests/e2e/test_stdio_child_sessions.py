"""Sub-agent runs stored as child sessions, through the real process on the real Anthropic
SDK (a scripted Messages API), every frame checked against the newest (unstable) schema
file: two children started in one response; after the process is killed and started
again, each child id loads read-only with its whole run replayed (its task, its tool call,
its answer); the children are listed under their parent only; a prompt to one is refused
with -32602; a fork of one is an ordinary session; deleting the parent deletes them."""

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import anthropic_env
from tests.e2e.test_stdio_subagents import SUBAGENTS, allowing_until
from tests.support.raw_acp import RawClient, raw_client
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

TASKS = {"Where is alpha?", "Where is beta?"}
ANSWERS = {"answer one", "answer two"}


def script(server: ScriptedAnthropic, release: threading.Event) -> None:
    server.script(
        stream(
            tool_use("agent", {"prompt": "Where is alpha?", "description": "alpha"}, id="toolu_a"),
            tool_use("agent", {"prompt": "Where is beta?", "description": "beta"}, id="toolu_b"),
            stop_reason="tool_use",
        ),
        # Each child lists the files once, then answers; the first to ask waits for the
        # other, so each gets one tool call and one answer whatever the order.
        stream(
            HANG, tool_use("list_files", {}, id="toolu_c1"), release=release, stop_reason="tool_use"
        ),
        stream(tool_use("list_files", {}, id="toolu_c2"), stop_reason="tool_use"),
        stream(text("answer one")),
        stream(text("answer two")),
        stream(text("Both sub-agents answered.")),
    )


async def run_parent(
    client: RawClient, parent: str, server: ScriptedAnthropic, release: threading.Event
) -> dict[str, Any]:
    asked = await client.request(
        "session/prompt",
        {"sessionId": parent, "prompt": [{"type": "text", "text": "find both"}]},
    )
    reading = asyncio.ensure_future(allowing_until(client, asked))
    await asyncio.to_thread(server.wait_for_hang, 1)
    await asyncio.to_thread(server.wait_for_requests, 3)
    release.set()
    return await reading


async def test_children_are_stored_listed_under_their_parent_and_load_after_a_restart(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    script(server, release)
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        parent = await client.open(workdir, SUBAGENTS)
        answer = await run_parent(client, parent, server, release)
        assert answer["result"]["stopReason"] == "end_turn"
        client.process.kill()  # no orderly shutdown: what was stored is what stays
        await client.process.wait()
    server.assert_script_consumed()
    children = {u["sessionId"] for u in client.updates() if u["sessionUpdate"] == "subagent_update"}
    assert len(children) == 2

    async with raw_client(env, workdir, which="unstable") as again:
        await again.call("initialize", {"protocolVersion": 1, "clientCapabilities": SUBAGENTS})
        top = await again.call("session/list", {"cwd": str(workdir)})
        assert [s["sessionId"] for s in top["result"]["sessions"]] == [parent]
        under = await again.call(
            "session/list",
            {"cwd": str(workdir), "_meta": {"iac_code": {"parentSessionId": parent}}},
        )
        listed = under["result"]["sessions"]
        assert {s["sessionId"] for s in listed} == children
        for entry in listed:
            meta = entry["_meta"]["iac_code"]
            assert meta["parentSessionId"] == parent
            assert meta["agent"] == "researcher"
            assert meta["toolCallId"] in ("toolu_a", "toolu_b")

        tasks, answers = set(), set()
        for child in children:
            before = len(again.received)
            loaded = await again.call(
                "session/load", {"sessionId": child, "cwd": str(workdir), "mcpServers": []}
            )
            assert "result" in loaded, loaded
            replay = [
                m["params"]["update"]
                for m in again.received[before:]
                if m.get("method") == "session/update" and m["params"]["sessionId"] == child
            ]
            kinds = [u["sessionUpdate"] for u in replay]
            [task] = [u for u in replay if u["sessionUpdate"] == "user_message_chunk"]
            tasks.add(task["content"]["text"])
            [call] = [u for u in replay if u["sessionUpdate"] == "tool_call"]
            [ended] = [u for u in replay if u["sessionUpdate"] == "tool_call_update"]
            assert call["toolCallId"] == ended["toolCallId"] and ended["status"] == "completed"
            [said] = [u for u in replay if u["sessionUpdate"] == "agent_message_chunk"]
            answers.add(said["content"]["text"])
            # In the order it ran: the task, the call, its end, the answer.
            assert kinds.index("user_message_chunk") < kinds.index("tool_call")
            assert kinds.index("tool_call_update") < kinds.index("agent_message_chunk")

            refused = await again.call(
                "session/prompt",
                {"sessionId": child, "prompt": [{"type": "text", "text": "go on"}]},
            )
            assert refused["error"]["code"] == -32602, refused
            assert refused["error"]["data"]["parentSessionId"] == parent
        assert tasks == TASKS and answers == ANSWERS

        # Resuming a child opens it (still read-only); forking one makes an ordinary
        # top-level session with its history, which outlives the parent.
        child = sorted(children)[0]
        opened = {"cwd": str(workdir), "mcpServers": []}
        resumed = await again.call("session/resume", {"sessionId": child, **opened})
        assert "result" in resumed, resumed
        forked = await again.call("session/fork", {"sessionId": child, **opened})
        fork = forked["result"]["sessionId"]
        top = await again.call("session/list", {"cwd": str(workdir)})
        assert {s["sessionId"] for s in top["result"]["sessions"]} == {parent, fork}

        deleted = await again.call("session/delete", {"sessionId": parent})
        assert "result" in deleted, deleted
        for child in children:
            gone = await again.call(
                "session/load", {"sessionId": child, "cwd": str(workdir), "mcpServers": []}
            )
            assert gone["error"]["code"] == -32602, gone
        kept = await again.call("session/load", {"sessionId": fork, **opened})
        assert "result" in kept, kept
