import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace

import pytest

from application.errors import ModelUnavailable
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse
from application.ports.tools import ToolContext, ToolPlan, ToolResult
from application.use_cases.subagent import SubAgentTools
from application.use_cases.subagent_runs import SubagentRuns
from domain.content import TextBlock, ToolUseBlock
from domain.events import (
    AgentEvent,
    ChildEvent,
    SessionMessageSent,
    SubagentChanged,
    SubagentState,
)
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.fakes.ports import FakeTools, FixedClock, ScriptedLLM, SequentialIds
from tests.support.patience import PATIENCE


async def ok(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text=f"contents of {arguments['path']}")


def asks(*calls: tuple[str, dict]) -> list:
    blocks = tuple(ToolUseBlock(id=f"s{i}", name=n, input=a) for i, (n, a) in enumerate(calls))
    return [ModelResponse(content=blocks, stop=ModelStop.TOOL_USE, usage=Usage())]


def answer(text: str) -> list:
    return [ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=Usage())]


def make(
    llm: ScriptedLLM, tools: FakeTools, max_requests: int = 5, runs: SubagentRuns | None = None
) -> SubAgentTools:
    return SubAgentTools(
        runs=runs,
        inner=tools,
        llm=llm,
        clock=FixedClock(),
        ids=SequentialIds(),
        max_requests=max_requests,
        max_tokens=100,
    )


async def nothing(_: str) -> None:
    pass


CONTEXT = ToolContext(cwd="/work", model="m-sub")


async def test_the_agent_tool_is_offered_beside_the_inner_tools() -> None:
    tools = make(ScriptedLLM(), FakeTools(read_file=ok, bash=ok))
    assert [d.name for d in tools.definitions()] == ["read_file", "bash", "agent"]
    assert [d.name for d in tools.definitions(("read_file",))] == ["read_file"]


async def test_a_sub_agent_reads_and_answers() -> None:
    llm = ScriptedLLM(asks(("read_file", {"path": "a.py"})), answer("a.py defines main"))
    inner = FakeTools(read_file=ok, write_file=ok)
    tools = make(llm, inner)
    assert (await tools.plan("agent", {"prompt": "what is in a.py?"}, CONTEXT)).problem is None
    result = await tools.run("agent", {"prompt": "what is in a.py?"}, CONTEXT, nothing)
    assert result.text == "a.py defines main"
    assert not result.is_error
    assert [t.name for t in llm.requests[0].tools] == ["read_file"]  # read-only only
    assert llm.requests[0].model == "m-sub"
    assert llm.requests[1].messages[-1].tool_results[0].content == "contents of a.py"


async def test_a_sub_agent_cannot_write_or_leave_cwd() -> None:
    llm = ScriptedLLM(
        asks(("write_file", {"path": "a"}), ("read_file", {"path": "/etc/x"})), answer("ok")
    )
    inner = FakeTools(read_file=ok, write_file=ok)
    inner.plans["read_file"] = ToolPlan(outside_cwd=True)
    await make(llm, inner).run("agent", {"prompt": "p"}, CONTEXT, nothing)
    results = llm.requests[1].messages[-1].tool_results
    assert "not available to a sub-agent" in results[0].content
    assert "outside the working directory" in results[1].content
    assert inner.ran == []


async def test_sub_agent_limits_and_failures_are_error_results() -> None:
    looping = ScriptedLLM(*(asks(("read_file", {"path": "a"})) for _ in range(2)))
    result = await make(looping, FakeTools(read_file=ok), max_requests=2).run(
        "agent", {"prompt": "p"}, CONTEXT, nothing
    )
    assert result.is_error
    assert "stopped after 2" in result.text
    failing = ScriptedLLM(ModelUnavailable("down"))
    result = await make(failing, FakeTools()).run("agent", {"prompt": "p"}, CONTEXT, nothing)
    assert result.is_error
    assert "down" in result.text
    assert (await make(failing, FakeTools()).plan("agent", {}, CONTEXT)).problem is not None


async def test_a_sub_agents_requests_are_reported_with_its_result() -> None:
    spent = Usage(input_tokens=300, output_tokens=20)
    llm = ScriptedLLM(
        [
            ModelResponse(
                content=(ToolUseBlock(id="s0", name="read_file", input={"path": "a"}),),
                stop=ModelStop.TOOL_USE,
                usage=spent,
            )
        ],
        [ModelResponse(content=(TextBlock(text="done"),), stop=ModelStop.END_TURN, usage=spent)],
    )
    result = await make(llm, FakeTools(read_file=ok)).run(
        "agent", {"prompt": "p"}, CONTEXT, nothing
    )
    assert result.usage == spent + spent


class Seen:
    """The events a sub-agent reports to its parent's clients, and its progress lines."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []
        self.lines: list[str] = []

    async def report(self, event: AgentEvent) -> None:
        self.events.append(event)

    async def progress(self, chunk: object) -> None:
        self.lines.append(str(chunk))

    def context(self) -> ToolContext:
        return replace(CONTEXT, session_id="parent", call_id="toolu_1", report=self.report)


async def test_a_sub_agent_is_a_child_session_announced_before_its_traffic() -> None:
    spent = Usage(input_tokens=5, output_tokens=2)
    llm = ScriptedLLM(
        asks(("read_file", {"path": "a.py"})),
        [ModelResponse(content=(TextBlock(text="main"),), stop=ModelStop.END_TURN, usage=spent)],
    )
    seen = Seen()
    arguments = {"prompt": "What is in a.py?", "description": "look"}
    result = await make(llm, FakeTools(read_file=ok)).run(
        "agent", arguments, seen.context(), seen.progress
    )

    first, *middle, answer, last = seen.events
    assert isinstance(first, SubagentChanged) and first.state is SubagentState.RUNNING
    child = first.child_id
    assert (first.title, first.tool_call_id, first.cancellable) == ("look", "toolu_1", True)
    assert all(isinstance(e, ChildEvent) and e.child_id == child for e in middle)
    inner = [e.event for e in middle if isinstance(e, ChildEvent)]
    assert [type(e).__name__ for e in inner] == [
        "SessionMessageSent",  # the task
        "ToolCallStarted",
        "ToolCallUpdated",
        "TextDelta",
    ]
    assert answer == SessionMessageSent(
        message_id=answer.message_id, sender=child, recipient="parent", text="main"
    )
    assert isinstance(last, SubagentChanged)
    assert (last.state, last.usage) == (SubagentState.DONE, spent)
    assert result.raw_output["subagent"]["sessionId"] == child  # kept for the parent's load
    assert seen.lines[0].startswith(f"Sub-agent {child} started: look")
    assert seen.lines[-1] == "Sub-agent done (7 tokens).\n"


async def test_a_child_cancelled_alone_gives_its_parent_an_error_result() -> None:
    async def hangs(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        await asyncio.Event().wait()
        yield ModelResponse(content=(), stop=ModelStop.END_TURN, usage=Usage())

    runs = SubagentRuns()
    llm = ScriptedLLM(hangs)
    tools = make(llm, FakeTools(), runs=runs)
    seen = Seen()
    running = asyncio.ensure_future(
        tools.run("agent", {"prompt": "p"}, seen.context(), seen.progress)
    )
    await asyncio.wait_for(llm.started.wait(), PATIENCE)  # announced, and asking
    child = seen.events[0].child_id  # type: ignore[union-attr]
    assert runs.parent_of(child) == "parent"
    assert runs.cancel(child)
    result = await running

    assert result.is_error and "cancelled this sub-agent" in result.text
    last = seen.events[-1]
    assert isinstance(last, SubagentChanged) and last.state is SubagentState.CANCELLED
    assert runs.parent_of(child) is None  # no longer running
    assert not runs.cancel(child)


async def test_cancelling_the_parent_cancels_the_child() -> None:
    async def hangs(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        await asyncio.Event().wait()
        yield ModelResponse(content=(), stop=ModelStop.END_TURN, usage=Usage())

    seen = Seen()
    llm = ScriptedLLM(hangs)
    running = asyncio.ensure_future(
        make(llm, FakeTools()).run("agent", {"prompt": "p"}, seen.context(), seen.progress)
    )
    await asyncio.wait_for(llm.started.wait(), PATIENCE)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    last = seen.events[-1]
    assert isinstance(last, SubagentChanged) and last.state is SubagentState.CANCELLED
