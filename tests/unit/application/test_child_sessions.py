"""A sub-agent run stored as a child session as it goes: its origin, each message and each
finished tool call, so a run that fails midway keeps what it had completed."""

from collections.abc import Mapping

from application.errors import ModelUnavailable
from application.ports.llm import ModelResponse
from application.ports.tools import ToolContext, ToolResult
from application.use_cases.child_sessions import ChildSessions
from application.use_cases.subagent import SubAgentTools
from domain.content import TextBlock, ToolUseBlock
from domain.ids import SessionId, ToolCallId
from domain.message import Role
from domain.spawn import Spawn
from domain.stop_reason import ModelStop
from domain.tool_call import ToolCallStatus
from domain.usage import Usage
from tests.fakes.ports import (
    FakeTools,
    FakeUnitOfWork,
    FixedClock,
    InMemorySessionRepository,
    ScriptedLLM,
    SequentialIds,
)

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
    tools = SubAgentTools(
        inner=FakeTools(read_file=ok),
        llm=llm,
        clock=FixedClock(),
        ids=SequentialIds(),
        max_requests=5,
        max_tokens=100,
        children=ChildSessions(uow=lambda: FakeUnitOfWork(repository)),
    )
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
