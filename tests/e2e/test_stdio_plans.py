"""Plans through the real process, the official client and the real SDK against the scripted
Messages API: todo_write sends `plan` updates, never asks, and its plans replay on load after
a restart."""

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.e2e.test_stdio_history import updates_before_answer
from tests.e2e.test_stdio_tools import all_valid, calls, start, tool_results
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

FIRST = [
    {"content": "Read the parser", "status": "in_progress", "priority": "high"},
    {"content": "Fix the bug", "status": "pending"},
    {"content": "Add a test", "status": "pending", "priority": "low"},
]
SECOND = [
    {"content": "Read the parser", "status": "completed", "priority": "high"},
    {"content": "Fix the bug", "status": "in_progress"},
    {"content": "Add a test", "status": "pending", "priority": "low"},
]
# The plans as the wire carries them: every entry whole, priority filled in.
FIRST_ON_WIRE = [
    {"content": "Read the parser", "status": "in_progress", "priority": "high"},
    {"content": "Fix the bug", "status": "pending", "priority": "medium"},
    {"content": "Add a test", "status": "pending", "priority": "low"},
]
SECOND_ON_WIRE = [
    {"content": "Read the parser", "status": "completed", "priority": "high"},
    {"content": "Fix the bug", "status": "in_progress", "priority": "medium"},
    {"content": "Add a test", "status": "pending", "priority": "low"},
]


def wire_updates(agent: Agent) -> list[dict[str, Any]]:
    """Every session/update the agent sent, as JSON on the wire."""
    return [m["params"]["update"] for m in agent.sent_by_agent("session/update")]


def plans_and_calls(updates: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """The tool calls' final states and the plans, in the order they were sent."""
    return [
        (u["sessionUpdate"], u.get("toolCallId"))
        for u in updates
        if u["sessionUpdate"] == "plan"
        or (u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed"))
    ]


async def test_todo_write_sends_plans_unasked_and_they_replay_after_a_restart(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(text("Let me plan."), tool_use("todo_write", {"todos": FIRST}, id="toolu_p1")),
        calls(
            tool_use("todo_write", {"todos": [{"content": "x", "status": "doing"}]}, id="toolu_p2")
        ),
        calls(tool_use("todo_write", {"todos": SECOND}, id="toolu_p3")),
        stream(text("Fixing the bug now.")),
        stream(text("Still planned.")),
    )
    env = anthropic_env(server)
    async with spawn(env) as first:
        sid = await start(first, workdir)
        result = await first.conn.prompt(session_id=sid, prompt=[text_block("fix the parser")])
        assert result.stop_reason == "end_turn"
    live = wire_updates(first)

    # The model was offered the tool with its enums, and told to keep a plan.
    offered = {t["name"]: t for t in server.requests[0].body["tools"]}
    item = offered["todo_write"]["input_schema"]["properties"]["todos"]["items"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert item["properties"]["priority"]["enum"] == ["high", "medium", "low"]
    assert "todo_write" in server.requests[0].system

    # Never asked; each valid call sent the complete list, after its call completed.
    assert first.sent_by_agent("session/request_permission") == []
    assert first.client.permission_requests == []
    plans = [u["entries"] for u in live if u["sessionUpdate"] == "plan"]
    assert plans == [FIRST_ON_WIRE, SECOND_ON_WIRE]
    assert plans_and_calls(live) == [
        ("tool_call_update", "toolu_p1"),
        ("plan", None),
        ("tool_call_update", "toolu_p2"),  # failed: no plan
        ("tool_call_update", "toolu_p3"),
        ("plan", None),
    ]
    # Shown as the model starts it, then filled in with its input.
    call, filled, *rest = first.client.tool_updates("toolu_p1")
    assert (call.session_update, call.kind, call.title) == ("tool_call", "think", "todo_write")
    assert (filled.session_update, filled.title) == ("tool_call_update", "Update plan (0/3 done)")
    assert filled.raw_input == {"todos": FIRST}
    # (a writer that lags may merge the filling update with the next one)
    assert [u.status for u in (filled, *rest) if u.status] == ["in_progress", "completed"]
    assert first.client.tool_updates("toolu_p2")[-1].status == "failed"
    assert first.client.tool_updates("toolu_p3")[1].title == "Update plan (1/3 done)"

    # What the model got back, in the next request each time.
    (done,) = tool_results(server, 1)
    assert (done["tool_use_id"], done.get("is_error", False)) == ("toolu_p1", False)
    assert done["content"] == "Plan updated: 0 of 3 done (1 in progress, 2 pending)."
    (bad,) = tool_results(server, 2)
    assert bad["is_error"] is True
    assert bad["content"] == (
        "Invalid plan: todos[0].status must be one of pending, in_progress, completed "
        "(not 'doing'). Send the complete list again, corrected."
    )
    (again,) = tool_results(server, 3)
    assert again["content"] == "Plan updated: 1 of 3 done (1 in progress, 1 pending)."

    # A new process on the same database: the load replays the plans as they evolved.
    async with spawn(env) as second:
        await second.initialize()
        await second.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        replay = updates_before_answer(second, "session/load")
        await second.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
    replayed = [u["entries"] for u in replay if u["sessionUpdate"] == "plan"]
    assert replayed == [FIRST_ON_WIRE, SECOND_ON_WIRE]  # the last is the current plan
    assert plans_and_calls(replay) == plans_and_calls(live)
    replayed_call = next(u for u in replay if u.get("toolCallId") == "toolu_p1")
    assert (replayed_call["kind"], replayed_call["title"]) == ("think", "Update plan (0/3 done)")
    # The next turn's request carries the whole exchange, the failed call included.
    history = server.requests[4].body["messages"]
    uses = [
        b["id"]
        for m in history
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    assert uses == ["toolu_p1", "toolu_p2", "toolu_p3"]
    all_valid(server)


@pytest.mark.parametrize("mode", ["plan", "bypass"])
async def test_todo_write_never_asks_in_plan_mode_or_bypass(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, mode: str
) -> None:
    server.script(
        calls(tool_use("todo_write", {"todos": FIRST}, id="toolu_p1")),
        stream(text("Planned.")),
    )
    async with spawn(anthropic_env(server, IAC_CODE_ALLOW_BYPASS="1")) as agent:
        sid = await start(agent, workdir)
        await agent.conn.set_session_mode(session_id=sid, mode_id=mode)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("plan it")])
    assert result.stop_reason == "end_turn"
    assert agent.sent_by_agent("session/request_permission") == []
    assert [u["entries"] for u in wire_updates(agent) if u["sessionUpdate"] == "plan"] == [
        FIRST_ON_WIRE
    ]
    assert agent.client.tool_updates("toolu_p1")[-1].status == "completed"
    assert "todo_write" in {t["name"] for t in server.requests[0].body["tools"]}
    all_valid(server)
