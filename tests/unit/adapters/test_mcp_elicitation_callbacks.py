"""The MCP client's elicitation callbacks without a server: MCP 2025-11-25 requests (a url
step with the server's own id, its completion notice) and 2026-07-28 ones (no id)."""

from typing import Any

from mcp_types import (
    ElicitCompleteNotification,
    ElicitCompleteNotificationParams,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)

from adapters.mcp.elicitation import ServerElicitations
from application.ports.elicitation import ElicitationAnswer
from domain.questions import ElicitationAction
from tests.fakes.mcp import AnsweringElicitations

ACCEPT = ElicitationAnswer(action=ElicitationAction.ACCEPT)
CONTEXT: Any = None  # the callbacks never read the SDK's request context


async def test_a_url_step_with_the_servers_id_is_done_when_the_server_says() -> None:
    answering = AnsweringElicitations(ACCEPT)
    callbacks = ServerElicitations(answering, lambda: "call-1")
    step = ElicitRequestURLParams(message="Sign in", url="https://x.test/", elicitation_id="s-1")
    assert await callbacks.elicit(CONTEXT, step) == ElicitResult(action="accept")
    assert answering.asked[0].elicitation_id == "s-1"
    await callbacks.call_returned()
    assert answering.completed == []  # not ours to say
    done = ElicitCompleteNotificationParams(elicitation_id="s-1")
    await callbacks.message(ElicitCompleteNotification(params=done))
    assert answering.completed == ["s-1"]


async def test_a_declined_step_of_ours_is_never_told_done() -> None:
    answering = AnsweringElicitations(ElicitationAnswer(action=ElicitationAction.DECLINE))
    callbacks = ServerElicitations(answering, lambda: None)
    step = ElicitRequestURLParams(message="Sign in", url="https://x.test/")
    assert await callbacks.elicit(CONTEXT, step) == ElicitResult(action="decline")
    await callbacks.call_returned()
    assert answering.completed == []


async def test_a_form_answer_goes_back_with_its_content() -> None:
    answering = AnsweringElicitations(
        ElicitationAnswer(action=ElicitationAction.ACCEPT, content={"name": "Ada", "n": 3})
    )
    callbacks = ServerElicitations(answering, lambda: "call-2")
    form = ElicitRequestFormParams(
        message="Name?", requested_schema={"type": "object", "properties": {}}
    )
    result = await callbacks.elicit(CONTEXT, form)
    assert result == ElicitResult(action="accept", content={"name": "Ada", "n": 3})
    assert answering.asked[0].tool_call_id == "call-2"
