import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace

import pytest

from application.agent_loop.model_request import TurnLimits
from application.agent_loop.provider_retry import RetryTerms
from application.compaction.context_meter import CompactionPolicy, ContextMeter
from application.errors import ModelUnavailable
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse, TextChunk
from application.ports.tools import ToolContext, ToolPlan, ToolResult, ToolRunner
from application.ports.tracing import NO_TRACING
from application.runtime.subagent_runs import SubagentRuns
from application.subagents.child_sessions import ChildSessions
from application.subagents.child_turns import ChildModel, ChildTurns
from application.subagents.subagent import SubAgentTools
from domain.compaction import SUMMARY_SYSTEM
from domain.config import Catalog
from domain.content import TextBlock, ToolUseBlock
from domain.events import (
    AgentEvent,
    ChildEvent,
    SessionMessageSent,
    SessionNotice,
    SubagentChanged,
    SubagentState,
    TextDelta,
    ToolCallUpdated,
)
from domain.message import MessageKind
from domain.stop_reason import ModelStop
from domain.tool_call import ToolCallStatus
from domain.usage import Usage
from tests.fakes.time_and_ids import FixedClock, SequentialIds
from tests.fakes.turn import FakeTools, ScriptedLLM
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.support.patience import PATIENCE
from tests.unit.application.compaction.support import SMALL
from tests.unit.application.world import CATALOG


async def ok(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text=f"contents of {arguments['path']}")


def asks(*calls: tuple[str, dict]) -> list:
    blocks = tuple(ToolUseBlock(id=f"s{i}", name=n, input=a) for i, (n, a) in enumerate(calls))
    return [ModelResponse(content=blocks, stop=ModelStop.TOOL_USE, usage=Usage())]


def answer(text: str, usage: Usage | None = None) -> list:
    """A reply as a model streams it: its text as it comes, then the whole message."""
    done = ModelResponse(
        content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=usage or Usage()
    )
    return [TextChunk(text=text), done]


def make(
    llm: ScriptedLLM,
    tools: ToolRunner,
    max_requests: int = 5,
    runs: SubagentRuns | None = None,
    uow: FakeUnitOfWork | None = None,
    ids: SequentialIds | None = None,
    retry: RetryTerms | None = None,
    catalog: Catalog = CATALOG,
    policy: CompactionPolicy | None = None,
) -> SubAgentTools:
    """The `agent` tool over `tools`, its children's turns on the agent loop as the
    container wires them: the same model for replies and summaries, each request asked
    once (unless `retry` says otherwise), each child stored in `uow`."""
    store, ids = uow or FakeUnitOfWork(), ids or SequentialIds()
    model = ChildModel(
        llm=llm,
        summaries=llm,
        catalog=catalog,
        limits=TurnLimits(max_turn_requests=max_requests, max_tokens=100),
        meter=ContextMeter(catalog=catalog, policy=policy or CompactionPolicy()),
        retry=retry or RetryTerms(max_retries=0),
    )
    turns = ChildTurns(
        model=model, uow=lambda: store, clock=FixedClock(), ids=ids, tracer=NO_TRACING
    )
    return SubAgentTools(
        inner=tools,
        turns=turns,
        children=ChildSessions(uow=lambda: store),
        runs=runs or SubagentRuns(),
        clock=FixedClock(),
        ids=ids,
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
        answer("done", spent),
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
    llm = ScriptedLLM(asks(("read_file", {"path": "a.py"})), answer("main", spent))
    seen = Seen()
    arguments = {"prompt": "What is in a.py?", "description": "look"}
    result = await make(llm, FakeTools(read_file=ok)).run(
        "agent", arguments, seen.context(), seen.progress
    )

    first, *middle, answered, last = seen.events
    assert isinstance(first, SubagentChanged) and first.state is SubagentState.RUNNING
    child = first.child_id
    assert (first.title, first.tool_call_id, first.cancellable) == ("look", "toolu_1", True)
    assert all(isinstance(e, ChildEvent) and e.child_id == child for e in middle)
    inner = [e.event for e in middle if isinstance(e, ChildEvent)]
    # As a session's turn shows itself: its context's size after each reply, each call
    # pending, in progress with its live output, then done; its reply as it streams.
    assert [type(e).__name__ for e in inner] == [
        "SessionMessageSent",  # the task
        "UsageUpdated",
        "ToolCallStarted",
        "ToolCallUpdated",
        "ToolCallUpdated",
        "ToolCallUpdated",
        "TextDelta",
        "UsageUpdated",
    ]
    done = inner[5]
    assert isinstance(done, ToolCallUpdated) and done.status is ToolCallStatus.COMPLETED
    assert inner[6] == TextDelta(message_id=inner[6].message_id, text="main")  # type: ignore[union-attr]
    assert answered == SessionMessageSent(
        message_id=answered.message_id, sender=child, recipient="parent", text="main"
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
    uow = FakeUnitOfWork()
    running = asyncio.ensure_future(
        make(llm, FakeTools(), uow=uow).run("agent", {"prompt": "p"}, seen.context(), seen.progress)
    )
    await asyncio.wait_for(llm.started.wait(), PATIENCE)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    last = seen.events[-1]
    assert isinstance(last, SubagentChanged) and last.state is SubagentState.CANCELLED
    # Its turn ended through its own control, as a cancelled turn does, and was stored.
    [child_id] = uow.sessions.stored
    [turn] = await uow.sessions.turn_records(child_id)
    assert turn.stop_reason == "cancelled"


async def test_a_childs_reply_streams_and_a_failed_request_is_asked_again_as_told() -> None:
    llm = ScriptedLLM(
        ModelUnavailable("overloaded", status=529),
        [TextChunk(text="found "), *answer("it")],
    )
    seen = Seen()
    quick = RetryTerms(max_retries=1, first_backoff=0.01, told_from=0.0)
    result = await make(llm, FakeTools(), retry=quick).run(
        "agent", {"prompt": "p"}, seen.context(), seen.progress
    )

    assert not result.is_error and len(llm.requests) == 2
    inner = [e.event for e in seen.events if isinstance(e, ChildEvent)]
    [waited] = [e for e in inner if isinstance(e, SessionNotice)]
    assert waited.title.startswith("The provider is unavailable: retrying in")
    said = [e.text for e in inner if isinstance(e, TextDelta)]
    assert said == ["found ", "it"]  # as the model streamed it, not once it was done


async def test_a_child_past_the_compaction_threshold_compacts_and_goes_on() -> None:
    async def long_file(_: Mapping[str, object]) -> ToolResult:
        return ToolResult(text="x" * 12_000)  # ~3,000 tokens: more than may stay verbatim

    read = ToolUseBlock(id="s0", name="read_file", input={"path": "a"})
    # Its first request counted 6,000 tokens of SMALL's 10,000: past half the window.
    first = ModelResponse(content=(read,), stop=ModelStop.TOOL_USE, usage=Usage(input_tokens=6_000))
    summary = ModelResponse(
        content=(TextBlock(text="SUMMARY: asked to read a."),),
        stop=ModelStop.END_TURN,
        usage=Usage(input_tokens=300),
    )
    llm = ScriptedLLM([first], [summary], answer("a is long"))
    uow = FakeUnitOfWork()
    policy = CompactionPolicy(compact_at=0.5, keep_turns=2)
    tools = make(llm, FakeTools(read_file=long_file), uow=uow, catalog=SMALL, policy=policy)
    on_m1 = replace(CONTEXT, model="m1")  # SMALL's, with a window of 10,000
    result = await tools.run("agent", {"prompt": "read a"}, on_m1, nothing)

    assert result.text == "a is long"
    assert llm.requests[1].system == SUMMARY_SYSTEM  # compacted before its second request
    [child_id] = uow.sessions.stored
    kinds = [m.kind for m in uow.sessions.messages[child_id]]
    assert kinds.count(MessageKind.COMPACTION) == 1
