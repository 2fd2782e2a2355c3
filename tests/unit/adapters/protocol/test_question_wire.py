"""A connection shows the room's typed questions as its dispatcher's protocol version says
(QuestionWire): the dispatchers that wrap the face (tracing, the lazy start) pass its way
on, and a connection whose dispatcher has none cannot show a question (unavailable: the
tool does not run), rather than send something no client reads."""

import asyncio
import json
from typing import Any, cast

import pytest

from adapters.acp_v1.handshake import initialize_answer
from adapters.acp_v1.questions import V1_QUESTIONS
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.lazy import LazyDispatcher
from adapters.protocol.question_wire import QuestionWire
from adapters.protocol.traced import TracedDispatcher
from application.attachments.room import Attachments
from application.handshake.initialize import Initialize
from application.ports.clients import ClientFailed
from application.ports.permissions import PermissionRequest, PermissionUnavailable
from application.ports.questions import PermissionAnswer, PermissionQuestion
from application.ports.tracing import NoTracing
from domain.ids import ToolCallId
from domain.permission import PermissionOption
from domain.tool_call import ToolKind

QUESTION = PermissionQuestion(
    "s1",
    PermissionRequest(
        tool_call_id=ToolCallId("call-1"),
        tool_name="bash",
        title="Run ls",
        kind=ToolKind.EXECUTE,
        arguments={"command": "ls"},
        locations=(),
        preview=(),
    ),
)


class Faceless(Dispatcher):
    """A dispatcher of no protocol version (a test's, say): it shows no questions."""

    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        return {}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        pass

    async def peer_closed(self, peer: Connection) -> None:
        pass


class V1Face(Faceless):
    def question_wire(self) -> QuestionWire:
        return V1_QUESTIONS


async def _nowhere(message: dict[str, Any]) -> None:
    pass


def _started(agent: Dispatcher) -> "asyncio.Future[Dispatcher]":
    future: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    future.set_result(agent)
    return future


async def test_a_connection_shows_a_question_in_its_faces_shape_and_reads_the_answer() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    connection = Connection(send, V1Face())
    shown = await connection.show(QUESTION)
    assert sent[0]["method"] == "session/request_permission"
    assert sent[0]["params"]["toolCall"]["toolCallId"] == "call-1"
    answer = {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
    await connection.receive(json.dumps({"jsonrpc": "2.0", "id": sent[0]["id"], "result": answer}))
    assert await shown.answer() == PermissionAnswer(PermissionOption.ALLOW_ALWAYS)


async def test_a_connection_without_a_face_cannot_show_a_question() -> None:
    with pytest.raises(ClientFailed, match="shows no questions"):
        await Connection(_nowhere, Faceless()).show(QUESTION)


async def test_a_question_only_faceless_clients_could_see_is_unavailable() -> None:
    room: Attachments[Connection] = Attachments(close=lambda _sid: _nowhere({}), busy=bool)
    room.attach("s1", Connection(_nowhere, Faceless()))
    with pytest.raises(PermissionUnavailable, match="shows no questions"):
        await asyncio.wait_for(room.ask_permission(QUESTION), 5)


async def test_tracing_passes_the_faces_way_on() -> None:
    assert TracedDispatcher(V1Face(), NoTracing()).question_wire() is V1_QUESTIONS


async def test_the_lazy_start_passes_the_faces_way_on_once_the_agent_is_up() -> None:
    facts = cast(Initialize, None)
    loading: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    lazy = LazyDispatcher(initialize_answer(facts), loading)
    assert lazy.question_wire() is None  # no session yet, so no question
    loading.set_result(V1Face())
    assert lazy.question_wire() is V1_QUESTIONS
