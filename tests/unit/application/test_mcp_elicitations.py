"""An MCP server's elicitation, asked in its session: declined where no client can show
it, cancelled when nobody answers in time or the session's turn is cancelled."""

import asyncio

from application.mcp.elicitations import SessionElicitations
from application.ports.elicitation import (
    Elicitation,
    ElicitationAnswer,
    ElicitationUnavailable,
)
from application.runtime.registry import ActiveSession
from application.runtime.turn_control import TurnControl
from domain.questions import ElicitationAction
from tests.factories import SessionFactory
from tests.fakes.elicitation import FakeElicitor

FORM = Elicitation(message="Name?", schema={"type": "object", "properties": {}})


def asked_in(
    active: ActiveSession, elicitor: FakeElicitor, timeout: float = 5
) -> SessionElicitations:
    return SessionElicitations(elicitor=elicitor, active=active, timeout=timeout)


async def test_the_answer_is_the_users() -> None:
    active = ActiveSession(session=SessionFactory())
    accepted = ElicitationAnswer(action=ElicitationAction.ACCEPT, content={"name": "Ada"})
    elicitor = FakeElicitor(answers=[accepted])
    assert await asked_in(active, elicitor).ask(FORM) == accepted
    assert elicitor.asked == [(active.session.id, FORM)]


async def test_no_client_able_to_show_it_declines() -> None:
    active = ActiveSession(session=SessionFactory())
    elicitor = FakeElicitor(answers=[ElicitationUnavailable("no client shows forms")])
    answer = await asked_in(active, elicitor).ask(FORM)
    assert answer.action is ElicitationAction.DECLINE


async def test_nobody_answering_in_time_cancels() -> None:
    active = ActiveSession(session=SessionFactory())
    elicitor = FakeElicitor(answers=[asyncio.Event()])
    answer = await asked_in(active, elicitor, timeout=0.01).ask(FORM)
    assert answer.action is ElicitationAction.CANCEL
    assert elicitor.withdrawn == 1


async def test_the_turn_cancelled_meanwhile_cancels_and_withdraws_the_question() -> None:
    active = ActiveSession(session=SessionFactory(), turn=TurnControl())
    elicitor = FakeElicitor(answers=[asyncio.Event()])
    asking = asyncio.ensure_future(asked_in(active, elicitor).ask(FORM))
    await elicitor.pending.wait()
    assert active.turn is not None
    active.turn.cancelled.set()
    answer = await asyncio.wait_for(asking, 5)
    assert answer.action is ElicitationAction.CANCEL
    assert elicitor.withdrawn == 1


async def test_a_completion_names_the_session() -> None:
    active = ActiveSession(session=SessionFactory())
    elicitor = FakeElicitor()
    await asked_in(active, elicitor).complete("el-1")
    assert elicitor.completed == [(active.session.id, "el-1")]
