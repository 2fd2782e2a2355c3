"""A sub-agent run stored as a child session as it goes: its origin, each message and each
finished tool call, so a run that fails midway keeps what it had completed."""

import asyncio
from collections.abc import AsyncIterator, Mapping

from application.errors import ModelUnavailable
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse, TextChunk
from application.ports.tools import ToolContext, ToolResult
from application.runtime.subagent_runs import SubagentRuns
from application.subagents.subagent import SubAgentTools
from domain.content import TextBlock, ToolUseBlock
from domain.ids import SessionId, ToolCallId
from domain.message import Role
from domain.spawn import Spawn
from domain.stop_reason import ModelStop
from domain.tool_call import ToolCallStatus
from domain.usage import Usage
from tests.fakes.sessions import InMemorySessionRepository
from tests.fakes.turn import FakeTools, ScriptedLLM
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.support.patience import PATIENCE
from tests.unit.application.test_subagent import make

CONTEXT = ToolContext(cwd="/work", model="m-sub", session_id="sess_parent", call_id="toolu_a")


async def ok(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text=f"contents of {arguments['path']}")


async def nothing(_: object) -> None:
    pass


def reads(path: str) -> list[ModelResponse]:
    use = ToolUseBlock(id="s0", name="read_file", input={"path": path})
    return [ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=Usage())]


def stored_child(llm: ScriptedLLM) -> tuple[SubAgentTools, InMemorySessionRepository]:
    repository = InMemorySessionRepository()
    tools = make(llm, FakeTools(read_file=ok), uow=FakeUnitOfWork(repository))
    return tools, repository


async def test_a_run_is_stored_as_a_session_naming_its_parent_call_and_agent() -> None:
    answer = ModelResponse(
        content=(TextBlock(text="a.py defines main"),), stop=ModelStop.END_TURN, usage=Usage()
    )
    tools, repository = stored_child(ScriptedLLM(reads("a.py"), [answer]))
    await tools.run("agent", {"prompt": "what is in a.py?"}, CONTEXT, nothing)

    [child_id] = repository.stored
    child = await repository.get(child_id)
    assert child is not None and child.cwd == "/work"
    assert child.spawn == Spawn(
        parent_id=SessionId("sess_parent"), tool_call_id=ToolCallId("toolu_a"), agent="researcher"
    )
    roles = [m.role for m in child.messages]
    assert roles == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    assert child.messages[0].visible_text() == "what is in a.py?"
    assert child.messages[2].tool_results[0].content == "contents of a.py"
    assert child.messages[3].visible_text() == "a.py defines main"
    [call] = (await repository.tool_calls(child_id)).values()
    assert call.name == "read_file" and call.status is ToolCallStatus.COMPLETED


async def test_a_run_that_fails_midway_keeps_what_it_completed() -> None:
    tools, repository = stored_child(ScriptedLLM(reads("a.py"), ModelUnavailable("down")))
    result = await tools.run("agent", {"prompt": "look"}, CONTEXT, nothing)
    assert result.is_error

    [child_id] = repository.stored
    child = await repository.get(child_id)
    assert child is not None
    assert [m.role for m in child.messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    assert list(await repository.tool_calls(child_id)) == ["s0"]


async def test_a_run_is_stored_with_its_turn_and_what_it_used() -> None:
    spent = Usage(input_tokens=4, output_tokens=3)
    answer = ModelResponse(content=(TextBlock(text="done"),), stop=ModelStop.END_TURN, usage=spent)
    tools, repository = stored_child(ScriptedLLM(reads("a.py"), [answer]))
    await tools.run("agent", {"prompt": "look"}, CONTEXT, nothing)

    [child_id] = repository.stored
    [turn] = await repository.turn_records(child_id)
    assert (turn.stop_reason, turn.requests, turn.usage) == ("end_turn", 2, spent)


async def test_a_child_cancelled_alone_keeps_what_it_had_said() -> None:
    shown = asyncio.Event()

    async def says_then_hangs(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextChunk(text="So far: a.py")
        shown.set()  # the chunk was taken (and shown) before the next one is asked for
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    runs, repository = SubagentRuns(), InMemorySessionRepository()
    tools = make(
        ScriptedLLM(says_then_hangs), FakeTools(), runs=runs, uow=FakeUnitOfWork(repository)
    )
    running = asyncio.ensure_future(tools.run("agent", {"prompt": "look"}, CONTEXT, nothing))
    await asyncio.wait_for(shown.wait(), PATIENCE)
    [child_id] = repository.stored
    assert runs.cancel(child_id)
    result = await running

    assert result.is_error and "cancelled this sub-agent" in result.text
    child = await repository.get(child_id)
    assert child is not None
    task, said = child.messages  # the reply as far as it came, as a cancelled turn keeps it
    assert task.visible_text() == "look"
    assert said.role is Role.ASSISTANT and said.interrupted
    assert said.visible_text() == "So far: a.py"
    [turn] = await repository.turn_records(child_id)
    assert turn.stop_reason == "cancelled"
