import asyncio
import itertools
from collections.abc import AsyncIterator, Mapping

from application.ports.llm import ModelRequest, ModelResponse, TextChunk
from application.ports.permissions import PermissionUnavailable
from application.ports.tools import ToolPlan, ToolResult
from application.sessions.new_session import NewSessionRequest
from application.tools.permissions import DENIED
from application.turn.prompt import PromptRequest
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.events import ToolCallStarted, ToolCallUpdated
from domain.history import provider_view
from domain.ids import ToolCallId
from domain.message import Role
from domain.permission import Decider, PermissionDecision, PermissionOption
from domain.stop_reason import ModelStop, StopReason
from domain.tool_call import DiffOutput, ToolCallStatus
from domain.usage import Usage
from tests.factories import T0
from tests.unit.application.world import World

# The four answers of a request without a sandbox to leave.
FOUR = (
    PermissionOption.ALLOW_ONCE,
    PermissionOption.ALLOW_ALWAYS,
    PermissionOption.REJECT_ONCE,
    PermissionOption.REJECT_ALWAYS,
)


async def ok(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text=f"done {arguments.get('path', '')}".strip())


def uses(*calls: tuple[str, dict]) -> list:
    blocks = tuple(
        ToolUseBlock(id=f"toolu_{i}", name=name, input=args) for i, (name, args) in enumerate(calls)
    )
    return [ModelResponse(content=blocks, stop=ModelStop.TOOL_USE, usage=Usage(output_tokens=1))]


def final(text: str = "All done.") -> list:
    return [
        TextChunk(text=text),
        ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=Usage()),
    ]


async def run_turn(world: World, *scripts, **prompt_kw) -> tuple[str, StopReason]:  # type: ignore[no-untyped-def]
    world.llm.scripts = list(scripts)
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    result = await world.prompt(**prompt_kw).execute(
        PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
    )
    return state.session_id, result.stop_reason


def tool_results(world: World, sid: str) -> list[ToolResultBlock]:
    return [b for m in world.uow.sessions.messages[sid] for b in m.tool_results]


def assert_provider_accepts(world: World, sid: str) -> None:
    view = provider_view(world.uow.sessions.messages[sid])
    for before, after in itertools.pairwise(view):
        assert before.role is not after.role
        if before.tool_uses:
            assert {u.id for u in before.tool_uses} == {r.tool_use_id for r in after.tool_results}


async def test_reads_inside_cwd_run_without_asking(world: World) -> None:
    world.tools.tools = {"read_file": ok}
    sid, stop = await run_turn(world, uses(("read_file", {"path": "a.py"})), final())
    assert stop is StopReason.END_TURN
    assert world.asker.requests == []
    assert tool_results(world, sid) == [ToolResultBlock(tool_use_id="toolu_0", content="done a.py")]
    started = world.sink.of_type(ToolCallStarted)
    assert started[0].title == "Read a.py"
    assert started[0].name == "read_file"  # the tool's stable name, beside the title shown
    assert started[0].status is ToolCallStatus.PENDING
    statuses = [e.status for e in world.sink.of_type(ToolCallUpdated) if e.status]
    assert statuses == [ToolCallStatus.IN_PROGRESS, ToolCallStatus.COMPLETED]
    record = world.uow.sessions.tool_calls_by_session[sid]["toolu_0"]
    assert record.status is ToolCallStatus.COMPLETED
    assert record.locations == ("/work/a.py",)
    # the result reached the model in the next request
    last = world.llm.requests[1].messages[-1]
    assert last.tool_results[0].content == "done a.py"


async def test_reads_outside_cwd_ask_first(world: World) -> None:
    world.tools.tools = {"read_file": ok}
    world.tools.plans["read_file"] = ToolPlan(locations=("/etc/passwd",), outside_cwd=True)
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    sid, _ = await run_turn(world, uses(("read_file", {"path": "/etc/passwd"})), final())
    assert len(world.asker.requests) == 1
    assert PermissionOption.ALLOW_ALWAYS not in world.asker.requests[0].options
    assert world.tools.ran == []
    assert tool_results(world, sid)[0].content == DENIED


async def test_allow_once_runs_and_asks_again_next_time(world: World) -> None:
    world.tools.tools = {"write_file": ok}
    world.tools.plans["write_file"] = ToolPlan(
        preview=(DiffOutput(path="/work/a", old_text=None, new_text="x"),)
    )
    world.asker.answers = [PermissionOption.ALLOW_ONCE, PermissionOption.ALLOW_ONCE]
    sid, _ = await run_turn(
        world, uses(("write_file", {"path": "a"})), uses(("write_file", {"path": "b"})), final()
    )
    assert [r.tool_call_id for r in world.asker.requests] == ["toolu_0", "toolu_0"]
    assert world.asker.requests[0].preview[0].new_text == "x"  # type: ignore[union-attr]
    assert [a["path"] for _, a in world.tools.ran] == ["a", "b"]
    decisions = world.uow.sessions.decisions[sid]
    assert [(d.option, d.decided_by) for d in decisions] == [
        (PermissionOption.ALLOW_ONCE, Decider.USER)
    ] * 2


async def test_reject_once_does_not_run_and_the_turn_goes_on(world: World) -> None:
    world.tools.tools = {"bash": ok}
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    sid, stop = await run_turn(world, uses(("bash", {"command": "rm -rf /"})), final())
    assert stop is StopReason.END_TURN
    assert world.tools.ran == []
    (result,) = tool_results(world, sid)
    assert (result.content, result.is_error) == ("Permission denied.", True)
    update = world.sink.of_type(ToolCallUpdated)[-1]
    assert update.status is ToolCallStatus.FAILED


async def test_always_answers_hold_for_the_rest_of_the_session(world: World) -> None:
    world.tools.tools = {"bash": ok, "write_file": ok}
    world.asker.answers = [PermissionOption.ALLOW_ALWAYS, PermissionOption.REJECT_ALWAYS]
    sid, _ = await run_turn(
        world,
        uses(("bash", {"command": "git status"}), ("write_file", {"path": "a"})),
        uses(("bash", {"command": "git status -s"}), ("write_file", {"path": "b"})),
        final(),
    )
    assert len(world.asker.requests) == 2  # the second round asked nothing
    assert [n for n, _ in world.tools.ran] == ["bash", "bash"]
    results = tool_results(world, sid)
    assert [r.is_error for r in results] == [False, True, False, True]
    rules = (await world.uow.sessions.get(sid)).permissions  # type: ignore[union-attr]
    assert rules.rejected == {"write_file"}
    (remembered,) = world.uow.rules.rules
    assert (remembered.tool_name, remembered.command.text) == ("bash", "git status …")  # type: ignore[union-attr]
    deciders = [d.decided_by for d in world.uow.sessions.decisions[sid]]
    assert deciders == [Decider.USER, Decider.USER, Decider.PROJECT_RULE, Decider.SESSION_RULE]


async def test_always_allow_for_bash_covers_the_same_program_and_subcommand_only(
    world: World,
) -> None:
    world.tools.tools = {"bash": ok}
    world.asker.answers = [PermissionOption.ALLOW_ALWAYS, PermissionOption.ALLOW_ONCE]
    await run_turn(
        world,
        uses(("bash", {"command": "npm test"})),
        uses(("bash", {"command": "npm test -- --watch"})),
        uses(("bash", {"command": "npm publish"})),
        final(),
    )
    asked = [r.arguments["command"] for r in world.asker.requests]
    assert asked == ["npm test", "npm publish"]
    first, second = world.asker.requests
    assert first.options == FOUR
    assert first.option_name(PermissionOption.ALLOW_ALWAYS) == (
        "Always allow `npm test …` commands in this project"
    )
    # Asked although a rule exists for bash: the rule is shown, so the user sees why.
    assert [r.description for r in second.remembered] == [
        "bash: commands starting with `npm test …` in /work"
    ]


async def test_a_compound_command_is_never_offered_always_allow(world: World) -> None:
    world.tools.tools = {"bash": ok}
    world.asker.answers = [PermissionOption.ALLOW_ALWAYS]  # not offered: taken as once
    await run_turn(world, uses(("bash", {"command": "git status && git push"})), final())
    (request,) = world.asker.requests
    assert PermissionOption.ALLOW_ALWAYS not in request.options
    assert world.uow.rules.rules == []
    assert [n for n, _ in world.tools.ran] == ["bash"]


async def test_client_cancelling_the_permission_request_ends_the_turn(world: World) -> None:
    world.tools.tools = {"bash": ok, "read_file": ok}
    world.asker.answers = [None]
    sid, stop = await run_turn(
        world, uses(("bash", {"command": "ls"}), ("read_file", {"path": "a"}))
    )
    assert stop is StopReason.CANCELLED
    assert world.tools.ran == []
    assert [r.is_error for r in tool_results(world, sid)] == [True, True]
    assert_provider_accepts(world, sid)


async def test_unanswered_permission_times_out_as_a_rejection(world: World) -> None:
    world.tools.tools = {"bash": ok}
    world.permission_timeout = 0.05
    world.asker.answers = [asyncio.Event()]
    sid, stop = await run_turn(world, uses(("bash", {"command": "ls"})), final())
    assert stop is StopReason.END_TURN
    assert "nobody answered" in tool_results(world, sid)[0].content
    assert world.uow.sessions.decisions[sid][0].decided_by is Decider.TIMEOUT


async def test_a_client_that_cannot_be_asked_means_rejection(world: World) -> None:
    world.tools.tools = {"bash": ok}
    world.asker.answers = [PermissionUnavailable("the client disconnected")]
    sid, _ = await run_turn(world, uses(("bash", {"command": "ls"})), final())
    assert "the client disconnected" in tool_results(world, sid)[0].content
    assert world.tools.ran == []


async def test_cancel_while_waiting_for_permission(world: World) -> None:
    world.tools.tools = {"bash": ok}
    world.asker.answers = [asyncio.Event()]
    world.llm.scripts = [uses(("bash", {"command": "ls"}))]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    running = asyncio.create_task(
        world.prompt().execute(
            PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
        )
    )
    await world.asker.asked.wait()
    world.cancel().execute(state.session_id)
    result = await asyncio.wait_for(running, 1)
    assert result.stop_reason is StopReason.CANCELLED
    assert world.tools.ran == []
    assert_provider_accepts(world, state.session_id)


async def test_cancel_while_a_tool_runs_discards_its_result(world: World) -> None:
    started = asyncio.Event()

    async def slow(arguments: Mapping[str, object]) -> ToolResult:
        started.set()
        await asyncio.sleep(60)
        return ToolResult(text="never")

    world.tools.tools = {"read_file": slow}
    world.llm.scripts = [uses(("read_file", {"path": "a"}), ("read_file", {"path": "b"}))]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    running = asyncio.create_task(
        world.prompt().execute(
            PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
        )
    )
    await started.wait()
    world.cancel().execute(state.session_id)
    result = await asyncio.wait_for(running, 1)
    assert result.stop_reason is StopReason.CANCELLED
    results = tool_results(world, state.session_id)
    assert "Cancelled" in results[0].content
    assert "Not run" in results[1].content
    assert world.uow.sessions.tool_calls_by_session[state.session_id]["toolu_0"].status is (
        ToolCallStatus.CANCELLED
    )
    assert_provider_accepts(world, state.session_id)


async def test_bad_input_fails_without_asking(world: World) -> None:
    world.tools.tools = {"edit_file": ok}
    world.tools.plans["edit_file"] = ToolPlan(problem="old_string was not found in /work/a.")
    sid, _ = await run_turn(world, uses(("edit_file", {"path": "a"})), final())
    assert world.asker.requests == []
    assert tool_results(world, sid)[0].content == "old_string was not found in /work/a."


async def test_unknown_tools_fail_clearly(world: World) -> None:
    sid, _ = await run_turn(world, uses(("teleport", {})), final())
    assert "no tool named 'teleport'" in tool_results(world, sid)[0].content


async def test_progress_is_streamed_as_tool_call_content(world: World) -> None:
    world.tools.tools = {"read_file": ok}
    await run_turn(world, uses(("read_file", {"path": "a"})), final())
    progress = [e for e in world.sink.of_type(ToolCallUpdated) if e.status is None]
    assert progress[0].output[0].text == "working\n"  # type: ignore[index,union-attr]


async def test_the_model_sees_the_tool_definitions(world: World) -> None:
    world.tools.tools = {"read_file": ok, "bash": ok}
    await run_turn(world, final())
    # the runner's tools, then ours (todo_write and the background tasks' tools are offered
    # in every mode)
    assert [t.name for t in world.llm.requests[0].tools] == [
        "read_file",
        "bash",
        "todo_write",
        "task_output",
        "task_kill",
    ]


async def test_tool_results_are_stored_before_the_next_model_call(world: World) -> None:
    seen_roles: list[list[Role]] = []

    async def second(request: ModelRequest) -> AsyncIterator:
        seen_roles.append([m.role for m in world.uow.sessions.messages[request_sid[0]]])
        for event in final():
            yield event

    request_sid: list[str] = []
    world.tools.tools = {"read_file": ok}
    world.llm.scripts = [uses(("read_file", {"path": "a"})), second]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    request_sid.append(state.session_id)
    await world.prompt().execute(
        PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
    )
    assert seen_roles == [[Role.USER, Role.ASSISTANT, Role.USER]]
    stored = [m.role for m in world.uow.sessions.messages[state.session_id]]
    assert stored == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]


async def test_finding_6_a_plan_with_an_ask_reason_always_asks_and_says_why(world: World) -> None:
    world.tools.tools = {"web_fetch": ok}
    reason = "127.0.0.1 is a loopback address"
    world.tools.plans["web_fetch"] = ToolPlan(ask_reason=reason)
    world.asker.answers = [PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE]
    sid, _ = await run_turn(
        world,
        uses(("web_fetch", {"url": "http://127.0.0.1/"})),
        uses(("web_fetch", {"url": "http://127.0.0.1/"})),
        final(),
    )
    assert len(world.asker.requests) == 2  # a read tool, asked each time
    request = world.asker.requests[0]
    assert reason in request.title
    assert request.preview[0].text == reason  # type: ignore[union-attr]
    assert PermissionOption.ALLOW_ALWAYS not in request.options
    assert [r.is_error for r in tool_results(world, sid)] == [False, True]


async def test_finding_6_always_allow_does_not_cover_an_ask_reason(world: World) -> None:
    world.tools.tools = {"web_fetch": ok}
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    earlier = PermissionDecision(
        tool_call_id=ToolCallId("toolu_earlier"),
        tool_name="web_fetch",
        arguments={},
        option=PermissionOption.ALLOW_ALWAYS,
        decided_by=Decider.USER,
        decided_at=T0,
    )
    world.uow.sessions.stored[state.session_id].decisions.append(earlier)
    world.tools.plans["web_fetch"] = ToolPlan(ask_reason="it sends a query string to x.test")
    world.llm.scripts = [uses(("web_fetch", {"url": "http://x.test/?q"})), final()]
    await world.prompt().execute(
        PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
    )
    assert len(world.asker.requests) == 1
    assert world.tools.ran == []
    assert world.uow.sessions.decisions[state.session_id][-1].option is (
        PermissionOption.REJECT_ONCE
    )
