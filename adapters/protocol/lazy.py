"""A dispatcher that answers `initialize` at once (with the face's answer, handed in) and
hands everything else to the full protocol agent as soon as it has loaded (in the
background, right after start). Until then, `early` answers may serve some requests from
light modules; one that returns None leaves its request to the agent. An agent that could
not start because its session store failed (a StorageError) is told as that store's error,
and, given `restart`, started again at the next request (the database may answer by then).
`when_idle` runs work that may wait (e.g. warming the model SDK) once no request is being
served, so none waits for it.

An early answer may be `Provisional`: something made before the agent (a session) that the
agent must take over once loaded. Until every take-over has run, and what follows its answer
has been sent (the session's commands and context usage), nothing reaches the agent: a
request for that session waits, and finds it as if the agent had made it, announced first,
so the client gets every update in the order a loaded agent sends them (acp-tck
ACP-CANCEL-002: nothing for a session after a cancelled prompt's answer).

Once the client has finished (stdin's EOF) while the agent still loads, nothing waits for
the load: the take-overs are dropped (the sessions are stored; the next start finds them),
notifications are dropped, and a request of a method in `answered_at_eof` (a prompt, which
the EOF cancels) gets that answer at once; other requests still get their real answer."""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.protocol.connection import AnswerThen, Connection, Dispatcher
from adapters.protocol.errors import to_rpc_error
from adapters.protocol.question_wire import QuestionWire
from application.errors import ApplicationError, StorageError

log = logging.getLogger(__name__)

# An early answer: the result (or a Provisional), or None to leave the request to the agent.
EarlyAnswer = Callable[[dict[str, Any] | None, Connection], Awaitable[Any | None]]
# The `initialize` answer, from light modules (raises RpcError for params it refuses).
InitializeAnswer = Callable[[dict[str, Any] | None, Connection], dict[str, Any]]
AgentStep = Callable[[Dispatcher], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Provisional:
    """An early `result` whose subject the agent must `take_over` as soon as it has loaded,
    before it serves anything else; `then` runs once the result is sent and the take-over
    done (what the client can only route after it has the result), also before the agent
    serves anything else."""

    result: Any
    take_over: AgentStep
    then: AgentStep


class LazyDispatcher(Dispatcher):
    def __init__(
        self,
        initialize: InitializeAnswer,
        agent: "asyncio.Future[Dispatcher]",
        early: Mapping[str, EarlyAnswer] | None = None,
        restart: "Callable[[], asyncio.Future[Dispatcher]] | None" = None,
        *,
        cancelled_by: Mapping[str, str] | None = None,
        answered_at_eof: Mapping[str, Any] | None = None,
    ) -> None:
        self._initialize = initialize
        self._cancelled_by = cancelled_by or {}  # the face's, until the agent has loaded
        self._answered_at_eof = answered_at_eof or {}
        self._ending = asyncio.Event()  # the client finished while the agent loaded
        self._agent = agent
        self._early = early or {}
        self._restart = restart
        self._serving = 0  # requests accepted and not yet answered
        # Provisional take-overs, each with where its answer is.
        self._taking_over: dict[asyncio.Future[Dispatcher], _Answer] = {}
        self._when_idle: list[Callable[[], None]] = []

    def accept(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Awaitable[Any]:
        """Once loaded, the agent accepts the request itself (it registers prompts as read)."""
        if method != "initialize" and self._loaded():
            work = self._agent.result().accept(method, params, peer)
        else:
            work = self.handle_request(method, params, peer)
        self._serving += 1
        return self._counted(work)

    async def _counted(self, work: Awaitable[Any]) -> Any:
        try:
            return await work
        finally:
            self._serving -= 1
            if not self._serving:
                self._run_idle_work()

    def when_idle(self, work: Callable[[], None]) -> None:
        """Run `work` (on the loop's thread, once) as soon as no request is being served:
        now, if none is."""
        self._when_idle.append(work)
        if not self._serving:
            self._run_idle_work()

    def _run_idle_work(self) -> None:
        waiting, self._when_idle = self._when_idle, []
        for work in waiting:
            work()

    def withdraw(self, method: str, params: dict[str, Any] | None, peer: Connection) -> bool:
        return self._loaded() and self._agent.result().withdraw(method, params, peer)

    def cancelled_by(self, method: str) -> str | None:
        if self._loaded():
            return self._agent.result().cancelled_by(method)
        return self._cancelled_by.get(method)

    def question_wire(self) -> QuestionWire | None:
        """The agent's, once it has started (no session, so no question, before that)."""
        agent = self._agent
        if agent.done() and not agent.cancelled() and not agent.exception():
            return agent.result().question_wire()
        return None

    def _loaded(self) -> bool:
        """Loaded, and every early-made session taken over: the agent serves directly."""
        agent = self._agent
        ready = agent.done() and not agent.cancelled() and not agent.exception()
        return ready and not self._taking_over

    async def handle_request(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> Any:
        if method == "initialize":
            return self._initialize(params, peer)
        early = self._early.get(method)
        if early is not None and not self._agent.done():
            answer = await early(params, peer)
            if isinstance(answer, Provisional):
                return self._hand_over(answer)
            if answer is not None:
                return answer
        # Every waiting request and notification waits the same way (one hop each), so
        # they resume in the order they came.
        started = await self._unless_ending()
        if started is None and method in self._answered_at_eof:
            return self._answered_at_eof[method]  # the client finished first, as its EOF says
        agent = started if started is not None else await self._started()
        # Requests that waited are resumed in the order they came, each accepted before the
        # next runs: a prompt is registered before a cancel sent right behind it arrives.
        return await agent.accept(method, params, peer)

    async def handle_notification(
        self, method: str, params: dict[str, Any] | None, peer: Connection
    ) -> None:
        agent = await self._unless_ending()
        if agent is None:
            log.debug("%s dropped: the client finished before the agent loaded", method)
            return
        await agent.handle_notification(method, params, peer)

    def finishing(self, peer: Connection) -> None:
        """The client sends nothing more: nothing waits for an agent still loading."""
        if self._loaded():
            self._agent.result().finishing(peer)
        elif not self._agent.done():
            self._ending.set()
            for taking_over in list(self._taking_over):  # each still waits for the agent
                taking_over.cancel()

    def _hand_over(self, answer: Provisional) -> AnswerThen:
        """The take-over starts waiting for the agent now, so every request read after this
        answer waits for it too; once the answer is sent (its `then`), the take-over sends
        what follows it, before the agent serves anything else."""
        answered = _Answer()
        taking_over = asyncio.ensure_future(self._take_over(answer, answered))
        self._taking_over[taking_over] = answered
        taking_over.add_done_callback(self._forget_take_over)

        async def then() -> None:
            answered.sent.set()

        return AnswerThen(answer.result, then)

    def _forget_take_over(self, taking_over: "asyncio.Future[Dispatcher]") -> None:
        self._taking_over.pop(taking_over, None)

    async def _take_over(self, answer: Provisional, answered: "_Answer") -> Dispatcher:
        agent = await asyncio.shield(self._agent)  # an agent that failed: its error is told
        try:
            await answer.take_over(agent)
        except Exception:  # the rest is served regardless; the session is stored anyway
            log.exception("the agent could not take over a session made before it loaded")
        await answered.sent.wait()
        if answered.peer_gone:  # nobody to tell
            return agent
        try:
            await answer.then(agent)
        except Exception:  # the answer went out; what follows it is best effort
            log.exception("the agent could not announce a session made before it loaded")
        return agent

    async def _started(self) -> Dispatcher:
        failed = self._agent.done() and not self._agent.cancelled() and self._agent.exception()
        if isinstance(failed, StorageError) and self._restart is not None:
            self._agent = self._restart()  # requests meanwhile wait for this attempt
        try:
            agent = await asyncio.shield(self._agent)
        except ApplicationError as exc:
            raise to_rpc_error(exc) from None
        if self._taking_over:  # sessions made early are the agent's before it serves
            await asyncio.gather(*self._taking_over, return_exceptions=True)
        return agent

    async def _unless_ending(self) -> Dispatcher | None:
        """The agent, as `_started`; None when the client finishes while it loads."""
        started = asyncio.ensure_future(self._started())
        ending = asyncio.ensure_future(self._ending.wait())
        try:
            done, _ = await asyncio.wait({started, ending}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ending.cancel()
            if not started.done():
                started.cancel()
        return started.result() if started in done else None

    async def peer_closed(self, peer: Connection) -> None:
        if self._taking_over:  # a session taken over for `peer` is then left as it goes
            for answer in self._taking_over.values():  # nothing follows it any more
                answer.gone()
            await asyncio.gather(*self._taking_over, return_exceptions=True)
        if self._loaded():
            await self._agent.result().peer_closed(peer)


@dataclass(slots=True)
class _Answer:
    """Where a Provisional answer is: `sent` once the transport has sent it, or once its
    client is gone (`peer_gone`: then nothing is to follow it)."""

    sent: asyncio.Event = field(default_factory=asyncio.Event)
    peer_gone: bool = False

    def gone(self) -> None:
        self.peer_gone = True
        self.sent.set()
