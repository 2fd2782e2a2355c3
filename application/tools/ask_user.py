"""The `ask_user` tool: the model asks the user a question (free text, choices, or a short
form), answered through the client's elicitation form. Offered only while the session's
controlling client advertised form elicitation."""

import asyncio
from collections.abc import Mapping

from application.ports.elicitation import (
    Elicitation,
    ElicitationMode,
    ElicitationUnavailable,
    Elicitor,
)
from application.ports.tools import ToolDefinition, ToolPlan, ToolResult
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.tools.call_log import ToolCallLog
from domain.content import ToolResultBlock
from domain.events import ToolCallUpdated
from domain.questions import (
    ASK_USER,
    MAX_CHOICES,
    MAX_FIELDS,
    FieldType,
    InvalidQuestion,
    read_question,
)
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus

NOT_ANSWERED = "Not answered: the turn was cancelled."

ASK_USER_TOOL = ToolDefinition(
    name=ASK_USER,
    description=(
        "Ask the user a question and wait for the answer; their editor shows it as a small "
        "form. Use it when you cannot go on without a decision only the user can make "
        "(which of several approaches, a missing value), not for things you can find out "
        "yourself, and not to ask permission for a tool (that is asked for you).\n"
        "- `choices`: the user picks one (or several, with `multiple`).\n"
        "- `fields`: a short form of named values (text, number, integer, boolean).\n"
        "- Neither: the user types a free-text answer.\n"
        "The user may also decline to answer or dismiss the question; then decide without "
        "their answer or stop and say what you need."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1, "description": "The question."},
            "choices": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "maxItems": MAX_CHOICES,
                "description": "Answers to pick from, each a short label.",
            },
            "multiple": {
                "type": "boolean",
                "description": "Whether several choices may be picked (default false).",
            },
            "fields": {
                "type": "array",
                "maxItems": MAX_FIELDS,
                "description": "A short form: one entry per value asked for.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "A key: letters, digits, _."},
                        "label": {"type": "string", "description": "What the user is shown."},
                        "type": {"type": "string", "enum": [t.value for t in FieldType]},
                        "required": {"type": "boolean", "description": "Default true."},
                    },
                    "required": ["name"],
                },
            },
        },
        "required": ["question"],
    },
)


def check_question(arguments: Mapping[str, object]) -> ToolPlan:
    """An ask_user call looked at before it runs: bad input fails it, never asking."""
    try:
        read_question(arguments)
    except InvalidQuestion as exc:
        return ToolPlan(problem=f"{exc} Ask again, corrected.")
    return ToolPlan()


class AskUser:
    """Runs `ask_user`: the question goes to the session's clients as an elicitation form.

    - The call is in progress while the user answers; it completes with what they said:
      an answer, "declined" or "cancelled", each a different result for the model.
    - Cancelling the turn withdraws the question and ends the call as cancelled.
    - Nobody answering within `timeout` seconds, or no client able to show the question,
      fails the call; the turn goes on.
    """

    def __init__(self, *, elicitor: Elicitor, calls: ToolCallLog, timeout: float) -> None:
        self._elicitor = elicitor
        self._calls = calls
        self.timeout = timeout  # seconds

    def offered(self, session: Session) -> bool:
        return self._elicitor.can_ask(session.id, ElicitationMode.FORM)

    async def run(
        self, session: Session, control: TurnControl, call: ToolCallRecord
    ) -> ToolResultBlock:
        question = read_question(call.arguments)  # checked when the call was looked at
        await self._calls.emit(
            session, ToolCallUpdated(tool_call_id=call.id, status=ToolCallStatus.IN_PROGRESS)
        )
        elicitation = Elicitation(
            message=question.text, schema=question.form(), tool_call_id=str(call.id)
        )
        asking = asyncio.wait_for(self._elicitor.ask(session.id, elicitation), self.timeout)
        try:
            answer = await control.guard(asking)
        except TurnCancelled:
            stopped = ToolResult(text=NOT_ANSWERED, is_error=True)
            return await self._calls.finish(session, call, ToolCallStatus.CANCELLED, stopped)
        except TimeoutError:
            late = f"Nobody answered the question within {self.timeout:g} s."
            return await self._calls.fail(session, call, late)
        except ElicitationUnavailable as exc:
            return await self._calls.fail(session, call, f"The question could not be asked: {exc}")
        text = question.answered(answer.action, answer.content)
        result = ToolResult(
            text=text,
            output=(TextOutput(text=text),),
            raw_output={"action": answer.action.value, "content": dict(answer.content)},
        )
        return await self._calls.finish(session, call, ToolCallStatus.COMPLETED, result)
