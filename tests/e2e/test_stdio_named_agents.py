"""Named sub-agents through the real process on the real Anthropic SDK (a scripted Messages
API), every frame checked against the newest (unstable) schema file: a project's agent
file is offered in the `agent` tool, run with its own system prompt and tools, announced
with its name; `/agents` lists it beside the built-in researcher."""

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import anthropic_env
from tests.e2e.test_stdio_subagents import SUBAGENTS, allowing_until, frames_of
from tests.support.raw_acp import RawClient, raw_client
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

REVIEWER = (
    "---\ndescription: Reviews a change for bugs\ntools: [read_file, grep]\n---\n"
    "You review changes carefully.\n"
)


def define_reviewer(workdir: Path) -> None:
    folder = workdir / ".iac-code" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(REVIEWER)
    (folder / "broken.md").write_text("no front matter: left out, the session goes on")


async def test_a_named_agent_is_offered_run_and_announced_by_name(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    define_reviewer(workdir)
    server.script(
        stream(
            tool_use("agent", {"prompt": "Review a.py", "agent": "reviewer"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(text("No bugs found.")),
        stream(text("The reviewer found nothing.")),
    )
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        parent = await client.open(workdir, SUBAGENTS)
        asked = await client.request(
            "session/prompt", {"sessionId": parent, "prompt": [{"type": "text", "text": "go"}]}
        )
        answer = await allowing_until(client, asked)

    assert answer["result"]["stopReason"] == "end_turn"
    server.assert_script_consumed()
    [offered] = [t for t in server.requests[0].body["tools"] if t["name"] == "agent"]
    assert "- reviewer: Reviews a change for bugs" in offered["description"]
    assert offered["input_schema"]["properties"]["agent"]["enum"] == ["researcher", "reviewer"]
    child_request = server.requests[1]
    assert child_request.system.startswith("You review changes carefully.")
    assert [t["name"] for t in child_request.body["tools"]] == ["read_file", "grep"]
    announced = [
        f["update"]
        for f in frames_of(client)
        if f["sessionId"] == parent and f["update"]["sessionUpdate"] == "subagent_update"
    ]
    assert announced[0]["_meta"]["iac_code"]["agent"] == "reviewer"  # its announcement
    assert announced[-1]["state"]["stopReason"] == "end_turn"
    # Usage: the child's own in its final state; the parent turn's counts it too.
    assert announced[-1]["state"]["usage"]["totalTokens"] == 15  # its one request: 10 + 5
    assert answer["result"]["usage"]["totalTokens"] == 45  # two parent requests and the child's


async def test_slash_agents_lists_the_researcher_and_the_projects_agents(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    define_reviewer(workdir)
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        session = await client.open(workdir, SUBAGENTS)
        answer = await client.call(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "/agents"}]},
        )

    assert answer["result"]["stopReason"] == "end_turn"
    assert server.requests == []  # a command, not a model turn
    said = "".join(
        _chunk_text(f["update"])
        for f in frames_of(client)
        if f["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert "- `researcher` (built in, the default)" in said
    assert "- `reviewer`: Reviews a change for bugs (tools: read_file, grep;" in said
    assert "broken" not in said
    commands = [
        f["update"]
        for f in frames_of(client)
        if f["update"]["sessionUpdate"] == "available_commands_update"
    ]
    assert "agents" in [c["name"] for c in commands[-1]["availableCommands"]]


def _chunk_text(update: dict[str, Any]) -> str:
    content = update["content"]
    return str(content.get("text", "")) if content.get("type") == "text" else ""


WRITER = (
    "---\ndescription: Writes files\ntools: [write_file]\n---\nYou write the files asked for.\n"
)


async def test_cancelling_the_parent_while_its_child_waits_for_permission_ends_both(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    folder = workdir / ".iac-code" / "agents"
    folder.mkdir(parents=True)
    (folder / "writer.md").write_text(WRITER)
    server.script(
        stream(
            tool_use("agent", {"prompt": "Write a.txt", "agent": "writer"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(
            tool_use("write_file", {"path": "a.txt", "content": "x"}, id="toolu_c1"),
            stop_reason="tool_use",
        ),
    )
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        parent = await client.open(workdir, SUBAGENTS)
        asked = await client.request(
            "session/prompt", {"sessionId": parent, "prompt": [{"type": "text", "text": "go"}]}
        )
        # The agent's start is allowed; the child's write is asked, naming the child.
        request = await _allowing_the_start_until_the_childs_request(client)
        ours = request["params"]["_meta"]["iac_code"]
        assert ours["agent"] == "writer" and request["params"]["sessionId"] == parent
        await client.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": parent}}
        )
        answer = await client.answer_to(asked)

    assert answer["result"]["stopReason"] == "cancelled"
    assert not (workdir / "a.txt").exists()
    withdrawn = [m["params"] for m in client.received if m.get("method") == "$/cancel_request"]
    assert withdrawn == [{"requestId": request["id"]}]  # the unanswered request is taken back
    states = [
        f["update"]["state"]
        for f in frames_of(client)
        if f["update"]["sessionUpdate"] == "subagent_update"
        and f["update"]["sessionId"] == ours["childSessionId"]
    ]
    # Running, then waiting for the user while asked, then cancelled with its parent.
    assert states[0] == {"state": "running"}
    assert states[1] == {"state": "requires_action"}
    assert states[-1]["state"] == "idle" and states[-1]["stopReason"] == "cancelled"


async def _allowing_the_start_until_the_childs_request(client: RawClient) -> dict[str, Any]:
    while True:
        message = await client.next_message()
        if message.get("method") != "session/request_permission":
            continue
        if message["params"]["toolCall"]["toolCallId"] == "toolu_c1":
            return message
        outcome = {"outcome": "selected", "optionId": "allow_once"}
        await client.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})


async def test_a_child_cancelled_alone_while_it_waits_for_permission_withdraws_the_request(
    base_env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    folder = workdir / ".iac-code" / "agents"
    folder.mkdir(parents=True)
    (folder / "writer.md").write_text(WRITER)
    server.script(
        stream(
            tool_use("agent", {"prompt": "Write a.txt", "agent": "writer"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(
            tool_use("write_file", {"path": "a.txt", "content": "x"}, id="toolu_c1"),
            stop_reason="tool_use",
        ),
        stream(text("The writer was stopped.")),
    )
    env = {**base_env, **anthropic_env(server)}
    async with raw_client(env, workdir, which="unstable") as client:
        parent = await client.open(workdir, SUBAGENTS)
        asked = await client.request(
            "session/prompt", {"sessionId": parent, "prompt": [{"type": "text", "text": "go"}]}
        )
        request = await _allowing_the_start_until_the_childs_request(client)
        child = request["params"]["_meta"]["iac_code"]["childSessionId"]
        await client.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": child}}
        )
        answer = await client.answer_to(asked)

    assert answer["result"]["stopReason"] == "end_turn"  # the parent went on
    server.assert_script_consumed()
    assert not (workdir / "a.txt").exists()
    withdrawn = [m["params"] for m in client.received if m.get("method") == "$/cancel_request"]
    assert withdrawn == [{"requestId": request["id"]}]
    [result] = [
        b for b in server.requests[2].messages[-1]["content"] if b.get("type") == "tool_result"
    ]
    assert result["tool_use_id"] == "toolu_a" and result.get("is_error") is True
    ends = [
        f["update"]["state"]
        for f in frames_of(client)
        if f["update"]["sessionUpdate"] == "subagent_update" and f["update"]["sessionId"] == child
    ]
    assert ends[-1]["stopReason"] == "cancelled"
