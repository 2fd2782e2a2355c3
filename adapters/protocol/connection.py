"""One JSON-RPC peer connection: serves the client's calls and makes our own calls to it.

It is the client the room holds (application.ports.clients.Client): it shows the room's
questions as its dispatcher's protocol version renders them (QuestionWire), and our calls
to it fail with that port's errors, which its users (the room's questions, the workspace)
read.

Over 400 lines on purpose: serving the client's calls and making our own share one peer's
state (the calls in flight both ways, the send order, the shutdown that answers or
withdraws them all), and split, each half would reach into the other's."""

import asyncio
import itertools
import logging
import time
from abc import abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from adapters.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    Malformed,
    Notification,
    Request,
    RequestId,
    Response,
    RpcError,
    error_message,
    parse,
    result_message,
)
from application.ports.clients import (
    CallWithdrawn,
    Client,
    ClientFailed,
    ClientGone,
    ShownQuestion,
)

# Annotations only: `initialize` is answered from this module before the questions' domain
# types (content, tools, permissions) are imported.
if TYPE_CHECKING:
    from adapters.protocol.question_wire import QuestionWire
    from application.ports.questions import Answer, Question

log = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], Awaitable[None]]
# (session id, seq): the session's updates are numbered again from `seq` (see
# Connection.numbered_again).
NumberedAgain = Callable[[str, int], None]

# How long a stream of updates may keep the event loop before others get a turn.
YIELD_SECONDS = 0.002

CANCEL_REQUEST = "$/cancel_request"


@dataclass(frozen=True, slots=True)
class AnswerThen:
    """A result to send, and what to do once it is sent: updates a client can only route
    after it has the response (e.g. for the session that response created)."""

    result: Any
    then: Callable[[], Awaitable[None]]


class Dispatcher(Protocol):
    def accept(
        self, method: str, params: dict[str, Any] | None, peer: "Connection"
    ) -> Awaitable[Any]:
        """Called as the request is read, synchronously and in arrival order; the returned
        awaitable serves it (in its own task). What must be known before anything read
        after it runs (a prompt a cancel right behind it must find) is registered here."""
        return self.handle_request(method, params, peer)

    @abstractmethod
    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: "Connection"
    ) -> Any:
        """The result of a call, or raise RpcError."""

    def withdraw(self, method: str, params: dict[str, Any] | None, peer: "Connection") -> bool:
        """`$/cancel_request` of a request still being served, given as it was accepted
        (the same params object): True when the dispatcher ended it its own way (a queued
        prompt leaves the queue); False: it is cancelled the usual way."""
        return False

    def cancelled_by(self, method: str) -> str | None:
        """The notification that ends `method`'s requests their own way when they are
        cancelled (`$/cancel_request`, or the client's input ending), sent with their
        `sessionId`: e.g. a prompt answers stopReason "cancelled" through its session's
        cancel. None: they are cancelled as any request is."""
        return None

    def question_wire(self) -> "QuestionWire | None":
        """How its protocol version shows a question (None: it shows none, e.g. a test's
        dispatcher or a peer that is no client)."""
        return None

    def finishing(self, peer: "Connection") -> None:
        """`peer` sends nothing more (stdin's EOF, a stop signal), before its requests
        still running are cancelled or waited for: what would only wait for something
        slow (an agent still loading) may end now."""

    @abstractmethod
    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: "Connection"
    ) -> None: ...

    @abstractmethod
    async def peer_closed(self, peer: "Connection") -> None: ...


class ConnectionClosed(ClientGone):
    pass


class CallFailed(RpcError, ClientFailed):
    """The client answered one of our requests with an error, or its transport could not
    carry the request: the client port's error, and a JSON-RPC error still."""


@dataclass(slots=True)
class OutgoingCall:
    """One of our requests to the client, sent: await its result or withdraw it."""

    connection: "Connection"
    id: int
    _future: "asyncio.Future[Any]"

    async def result(self) -> Any:
        try:
            return await self._future
        finally:
            self.connection._forget(self.id, self._future)

    async def withdraw(self) -> None:
        await self.connection.withdraw(self.id)


@dataclass(slots=True)
class ShownOnConnection(ShownQuestion):
    """A question sent as its protocol version's request: its answer read the same way."""

    call: OutgoingCall
    wire: "QuestionWire"
    question: "Question"

    async def answer(self) -> "Answer":
        return self.wire.answer(self.question, await self.call.result())

    async def withdraw(self) -> None:
        await self.call.withdraw()


@dataclass(slots=True, eq=False)
class _InFlight:
    """A request being served, and whether the client asked to cancel it."""

    request: Request
    task: "asyncio.Task[None] | None" = None
    cancelled: bool = False
    started: bool = False  # a task cancelled before it starts would never answer
    abandoned: bool = False  # answered for it (the server is shutting down): not again


class Connection(Client):
    """Each inbound call runs in its own task, so a long prompt never blocks a cancel, and
    replies may interleave. Messages are sent in the order they are produced."""

    def __init__(
        self, send: Send, dispatcher: Dispatcher, *, on_numbered_again: NumberedAgain | None = None
    ) -> None:
        self._send = send
        self._dispatcher = dispatcher
        self._on_numbered_again = on_numbered_again  # a transport that skips numbers it sent
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_flight: dict[RequestId, _InFlight] = {}  # by the client's request id
        self._serving: set[_InFlight] = set()  # every request not answered yet, null ids too
        self._closed = False
        self._yield_at = 0.0
        # `initialize` params' clientCapabilities, as sent (read with the SDK's model where
        # used: the handshake answers before pydantic is loaded).
        self.client_capabilities: Any = None
        self.client_name: str | None = None  # `initialize`'s clientInfo.name, if given

    async def receive(self, raw: bytes | str) -> None:
        """Take one framed message. Never raises for bad input: it answers it instead."""
        try:
            incoming = parse(raw)
        except Malformed as exc:
            log.warning("rejected message: %s", exc.message)
            if exc.answer:
                await self._send(error_message(exc.id, exc))
            return
        except Exception:  # whatever a line holds, the connection goes on serving
            log.exception("could not read a message")
            await self._send(error_message(None, RpcError(PARSE_ERROR, "Parse error.")))
            return
        match incoming:
            case Request():
                serving = _InFlight(incoming)
                work = self._dispatcher.accept(incoming.method, incoming.params, self)
                serving.task = self._spawn(self._serve(serving, work))
                self._serving.add(serving)
                if incoming.id is not None:
                    self._in_flight[incoming.id] = serving
            case Notification(method=method) if method == CANCEL_REQUEST:
                self._cancel_request(incoming.params)
            case Notification():
                self._spawn(self._notify(incoming))
            case Response():
                self._resolve(incoming)

    async def refuse_oversized(self, size: int, limit: int) -> None:
        """Answer a message that was too large to read (its id is unknown: it is null)."""
        log.warning("rejected a %d-byte message (limit %d)", size, limit)
        error = RpcError(
            INVALID_REQUEST,
            f"Invalid request: the message is larger than the limit of {limit} bytes.",
            {"size": size, "limit": limit, "setting": "IAC_CODE_MAX_MESSAGE_BYTES"},
        )
        await self._send(error_message(None, error))

    def numbered_again(self, session_id: str, seq: int) -> None:
        """The session's next update carries `seq` although this client may have been sent
        updates numbered `seq` or more: another replica numbered them and died before its
        journal wrote them, and the session's next numberer gave those numbers again. A
        transport that skips numbers it has sent (HTTP's event ids) must not skip these."""
        if self._on_numbered_again is not None:
            self._on_numbered_again(session_id, seq)

    async def send_notification(self, method: str, params: dict[str, Any]) -> None:
        if not self._closed:
            await self._send({"jsonrpc": "2.0", "method": method, "params": params})
        # A turn whose model never waits (the demo, a cached reply) would otherwise hold the
        # loop until it ends: yielding now and then lets a `session/cancel` in. Not after
        # every update: a loop pass each costs more than sending one.
        now = time.monotonic()
        if now >= self._yield_at:
            self._yield_at = now + YIELD_SECONDS
            await asyncio.sleep(0)

    async def show(self, question: "Question") -> ShownOnConnection:
        """The question, as the dispatcher's protocol version asks it (raises CallFailed
        when it has no way to, or the transport cannot carry it)."""
        wire = self._dispatcher.question_wire()
        if wire is None:
            raise CallFailed(INTERNAL_ERROR, "this connection's protocol shows no questions")
        method, params = wire.request(question)
        return ShownOnConnection(await self.start_call(method, params), wire, question)

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request to the client and wait for its result (raises CallFailed when it
        answers with an error, ConnectionClosed when it goes away first)."""
        outgoing = await self.start_call(method, params)
        return await outgoing.result()

    async def start_call(self, method: str, params: dict[str, Any]) -> "OutgoingCall":
        """Send a request to the client; its answer is awaited (or the request withdrawn)
        through the returned handle."""
        if self._closed:
            raise ConnectionClosed("the client has disconnected")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
        except RpcError as exc:  # its transport cannot carry it (over the event size limit)
            self._pending.pop(request_id, None)
            raise CallFailed(exc.code, exc.message, exc.data) from exc
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return OutgoingCall(self, request_id, future)

    async def withdraw(self, request_id: int) -> None:
        """Stop waiting for one of our requests and tell the client with `$/cancel_request`
        (its answer, if one still comes, is ignored)."""
        future = self._pending.pop(request_id, None)
        if future is None:
            return
        if not future.done():
            future.set_exception(CallWithdrawn(request_id))
            future.exception()  # retrieved: nobody need await a withdrawn call
        if not self._closed:
            await self._send(
                {"jsonrpc": "2.0", "method": CANCEL_REQUEST, "params": {"requestId": request_id}}
            )

    async def finish(self, bound: float) -> None:
        """The client sends nothing more but still reads (stdin's EOF): every request it
        sent is answered, then the connection closes. Its prompts are cancelled (they
        answer `cancelled`); other requests get their own answer, within `bound` seconds;
        what still runs then is answered -32603, the server shutting down."""
        self._dispatcher.finishing(self)
        waiting = list(self._serving)
        for serving in waiting:
            self._cancel_prompt(serving)
        if waiting:
            log.info("answering %d request(s) still running (at most %g s)", len(waiting), bound)
            tasks = {s.task for s in waiting if s.task is not None}
            await asyncio.wait(tasks, timeout=bound)
        for serving in [s for s in waiting if s in self._serving]:
            serving.abandoned = True
            self._serving.discard(serving)
            await self._send(error_message(serving.request.id, _shutting_down(serving, bound)))
        await self.close()

    async def close(self, *, grace: float = 2.0) -> None:
        """Stop: let running calls finish their cancellation, then drop the rest."""
        if self._closed:
            return
        await self._dispatcher.peer_closed(self)
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the client has disconnected"))
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    def _forget(self, request_id: int, future: "asyncio.Future[Any]") -> None:
        if self._pending.get(request_id) is future:
            del self._pending[request_id]

    def _spawn(self, work: Awaitable[None]) -> "asyncio.Task[None]":
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _cancel_request(self, params: dict[str, Any] | None) -> None:
        """`$/cancel_request`: end one of this client's requests still being served. An
        unknown or finished id is ignored (the answer may already be on its way)."""
        request_id = (params or {}).get("requestId")
        if request_id is None or isinstance(request_id, bool | float | dict | list):
            return
        serving = self._in_flight.get(request_id)
        if serving is None or serving.cancelled or serving.task is None:
            return
        request = serving.request
        if self._dispatcher.withdraw(request.method, request.params, self):
            return
        if self._cancel_prompt(serving):
            return
        serving.cancelled = True
        if serving.started:
            serving.task.cancel()  # else it answers "cancelled" as it starts

    def _cancel_prompt(self, serving: _InFlight) -> bool:
        """A request that ends through its own cancel (a prompt: `session/cancel` of its
        session) is cancelled that way; False for any other."""
        request = serving.request
        own_cancel = self._dispatcher.cancelled_by(request.method)
        session_id = (request.params or {}).get("sessionId")
        if own_cancel is None or not isinstance(session_id, str):
            return False
        self._spawn(self._notify(Notification(own_cancel, {"sessionId": session_id})))
        return True

    async def _serve(self, serving: _InFlight, work: Awaitable[Any]) -> None:
        request = serving.request
        serving.started = True
        after: Callable[[], Awaitable[None]] | None = None
        try:
            if serving.cancelled:  # `$/cancel_request` read right behind it
                if asyncio.iscoroutine(work):
                    work.close()
                raise asyncio.CancelledError
            result = await work
            if isinstance(result, AnswerThen):
                result, after = result.result, result.then
            reply = result_message(request.id, result)
        except RpcError as exc:
            reply = error_message(request.id, exc)
        except asyncio.CancelledError:
            if not serving.cancelled:  # the connection is closing: nobody to answer
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            reply = error_message(request.id, RpcError(REQUEST_CANCELLED, "request cancelled"))
        except Exception:
            log.exception("internal error serving %s", request.method)
            reply = error_message(
                request.id,
                RpcError(
                    INTERNAL_ERROR,
                    "Internal error: the agent failed to serve this request.",
                    {"method": request.method},
                ),
            )
        finally:
            if self._in_flight.get(request.id) is serving:
                del self._in_flight[request.id]
            self._serving.discard(serving)
        if serving.abandoned:  # already answered: the server is shutting down
            return
        await self._send(reply)
        if after is not None:
            try:
                await after()
            except Exception:  # the answer went out; what follows it is best effort
                log.exception("failed after answering %s", request.method)

    async def _notify(self, notification: Notification) -> None:
        try:
            await self._dispatcher.handle_notification(
                notification.method, notification.params, self
            )
        except RpcError as exc:  # the client's mistake (e.g. bad params): said, not raised
            log.warning("ignored notification %s: %s", notification.method, exc.message)
        except Exception:  # notifications are never answered, not even with errors
            log.exception("failed to handle notification %s", notification.method)

    def _resolve(self, response: Response) -> None:
        future = self._pending.get(response.id) if isinstance(response.id, int) else None
        if future is None or future.done():
            log.warning("ignoring a response to unknown request id %r", response.id)
            return
        if response.error is not None:
            error = response.error
            code = error.get("code")
            future.set_exception(
                CallFailed(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(response.result)


def _shutting_down(serving: _InFlight, bound: float) -> RpcError:
    return RpcError(
        INTERNAL_ERROR,
        "Internal error: the server is shutting down before this request finished.",
        {"method": serving.request.method, "reason": "shutting_down", "waitedSeconds": bound},
    )
