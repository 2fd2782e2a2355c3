"""The ask_user tool with in-memory fakes: offered only while the client can show a form,
answered through the elicitor (accept, decline and cancel each a different result for the
model), never asking permission, and ended by the turn's cancel."""

import asyncio

from application.ports.elicitation import ElicitationAnswer, ElicitationUnavailable
from application.sessions.new_session import NewSessionRequest
from application.tools.ask_user import ASK_USER_TOOL
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.events import ToolCallStarted, ToolCallUpdated
from domain.questions import ElicitationAction
from domain.stop_reason import StopReason
from domain.tool_call import ToolCallStatus, ToolKind
from tests.fakes.elicitation import FakeElicitor
from tests.unit.application.test_tools import (
    assert_provider_accepts,
    final,
    run_turn,
    tool_results,
    uses,
)
from tests.unit.application.world import World

BRANCH = {"question": "Which branch?", "choices": ["main", "dev"]}


def answer(action: ElicitationAction, **content: object) -> ElicitationAnswer:
    return ElicitationAnswer(action=action, content=content)


async def test_not_offered_when_the_client_shows_no_form(world: World) -> None:
    await run_turn(world, final())
    assert "ask_user" not in {t.name for t in world.llm.requests[0].tools}


async def test_offered_when_the_client_shows_forms(world: World) -> None:
    world.elicitor = FakeElicitor()
    await run_turn(world, final())
    (offered,) = [t for t in world.llm.requests[0].tools if t.name == "ask_user"]
    assert offered == ASK_USER_TOOL


async def test_an_answer_reaches_the_model_without_any_permission_asked(world: World) -> None:
    world.elicitor = FakeElicitor(answers=[answer(ElicitationAction.ACCEPT, answer="dev")])
    sid, stop = await run_turn(world, uses(("ask_user", BRANCH)), final())
    assert stop is StopReason.END_TURN
    assert world.asker.requests == []
    ((asked_in, asked),) = world.elicitor.asked
    assert (asked_in, asked.message, asked.tool_call_id) == (sid, "Which branch?", "toolu_0")
    assert asked.schema == {
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Answer",
                "oneOf": [{"const": "main", "title": "main"}, {"const": "dev", "title": "dev"}],
            }
        },
        "required": ["answer"],
    }
    (result,) = tool_results(world, sid)
    assert (result.content, result.is_error) == ("The user answered: dev", False)
    started = world.sink.of_type(ToolCallStarted)[0]
    assert (started.kind, started.title) == (ToolKind.OTHER, "Ask: Which branch?")
    statuses = [e.status for e in world.sink.of_type(ToolCallUpdated)]
    assert statuses == [ToolCallStatus.IN_PROGRESS, ToolCallStatus.COMPLETED]
    record = world.uow.sessions.tool_calls_by_session[sid]["toolu_0"]
    assert record.raw_output == {"action": "accept", "content": {"answer": "dev"}}


async def test_decline_and_cancel_are_different_results_and_the_turn_goes_on(
    world: World,
) -> None:
    world.elicitor = FakeElicitor(
        answers=[answer(ElicitationAction.DECLINE), answer(ElicitationAction.CANCEL)]
    )
    sid, stop = await run_turn(
        world, uses(("ask_user", BRANCH)), uses(("ask_user", BRANCH)), final()
    )
    assert stop is StopReason.END_TURN
    declined, cancelled = tool_results(world, sid)
    assert (declined.content, declined.is_error) == ("The user declined to answer.", False)
    assert (cancelled.content, cancelled.is_error) == ("The user cancelled the question.", False)


async def test_a_form_of_fields_is_answered_field_by_field(world: World) -> None:
    world.elicitor = FakeElicitor(
        answers=[answer(ElicitationAction.ACCEPT, port=8080, tls=True, extra="dropped")]
    )
    form = {
        "question": "Server settings?",
        "fields": [
            {"name": "port", "label": "Port", "type": "integer"},
            {"name": "tls", "type": "boolean", "required": False},
        ],
    }
    sid, _ = await run_turn(world, uses(("ask_user", form)), final())
    ((_, asked),) = world.elicitor.asked
    assert asked.schema == {
        "type": "object",
        "properties": {
            "port": {"type": "integer", "title": "Port"},
            "tls": {"type": "boolean", "title": "tls"},
        },
        "required": ["port"],
    }
    (result,) = tool_results(world, sid)
    assert result.content == "The user answered:\n- port: 8080\n- tls: true"


async def test_bad_input_fails_without_asking(world: World) -> None:
    world.elicitor = FakeElicitor()
    bad = {"question": "", "choices": ["a", "a"], "fields": [{"name": "1x", "type": "date"}]}
    sid, stop = await run_turn(world, uses(("ask_user", bad)), final())
    assert stop is StopReason.END_TURN
    assert world.elicitor.asked == []
    (result,) = tool_results(world, sid)
    assert result.is_error
    for problem in (
        "question must be a non-empty string",
        "choices must differ",
        "fields[0].name must be a word",
        "fields[0].type must be one of text, number, integer, boolean (not 'date')",
    ):
        assert problem in result.content


async def test_a_call_the_client_cannot_show_fails_clearly(world: World) -> None:
    sid, _ = await run_turn(world, uses(("ask_user", BRANCH)), final())  # not offered
    (result,) = tool_results(world, sid)
    assert result.is_error and "ask_user is not available" in result.content


async def test_no_client_able_to_answer_fails_the_call_and_the_turn_goes_on(
    world: World,
) -> None:
    world.elicitor = FakeElicitor(answers=[ElicitationUnavailable("every client failed")])
    sid, stop = await run_turn(world, uses(("ask_user", BRANCH)), final())
    assert stop is StopReason.END_TURN
    (result,) = tool_results(world, sid)
    assert result.is_error
    assert result.content == "The question could not be asked: every client failed"


async def test_nobody_answering_in_time_fails_the_call(world: World) -> None:
    world.permission_timeout = 0.01
    world.elicitor = FakeElicitor(answers=[asyncio.Event()])
    sid, stop = await run_turn(world, uses(("ask_user", BRANCH)), final())
    assert stop is StopReason.END_TURN
    (result,) = tool_results(world, sid)
    assert result.is_error and "Nobody answered the question within 0.01 s" in result.content
    assert world.elicitor.withdrawn == 1


async def test_cancelling_the_turn_withdraws_the_question(world: World) -> None:
    world.elicitor = FakeElicitor(answers=[asyncio.Event()])
    world.llm.scripts = [uses(("ask_user", BRANCH))]
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    running = asyncio.create_task(
        world.prompt().execute(
            PromptRequest(session_id=state.session_id, content=(TextBlock(text="go"),))
        )
    )
    await world.elicitor.pending.wait()
    world.cancel().execute(state.session_id)
    result = await asyncio.wait_for(running, 5)
    assert result.stop_reason is StopReason.CANCELLED
    assert world.elicitor.withdrawn == 1
    (block,) = tool_results(world, state.session_id)
    assert block.is_error and block.content == "Not answered: the turn was cancelled."
    record = world.uow.sessions.tool_calls_by_session[state.session_id]["toolu_0"]
    assert record.status is ToolCallStatus.CANCELLED
    assert_provider_accepts(world, state.session_id)
