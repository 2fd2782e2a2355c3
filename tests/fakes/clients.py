"""Fake clients for the room (application.attachments): no transport, no Connection. Each
records the questions it was shown (answered, or failed, by the test) and the updates it
was sent (as a connection is: the protocol core's channels send them so)."""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from application.ports.clients import CallWithdrawn, Client, ClientFailed, ClientGone, ShownQuestion
from application.ports.questions import Answer, Question


class FakeCall(ShownQuestion):
    """One question shown to a fake client."""

    def __init__(self, question: Question) -> None:
        self.question = question
        self.withdrawn = False
        self._answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

    async def answer(self) -> Answer:
        return await self._answer

    async def withdraw(self) -> None:
        self.withdrawn = True
        if not self._answer.done():
            self._answer.set_exception(CallWithdrawn())
            self._answer.exception()  # retrieved: nobody need await a withdrawn call

    def reply(self, answer: Answer) -> None:
        """The user answers on this client."""
        if not self._answer.done():
            self._answer.set_result(answer)

    def fail(self, message: str) -> None:
        self._answer.set_exception(ClientFailed(message, code=-1))

    def lose(self) -> None:
        self._answer.set_exception(ClientGone())


class FakeClient(Client):
    """`refuse`: its transport refuses every question (ClientFailed as it is sent);
    `gone`: it went away (ClientGone as a question is sent)."""

    def __init__(self, name: str, capabilities: Any = None) -> None:
        self.name = name
        self.client_capabilities = capabilities
        self.notified: list[tuple[str, dict[str, Any]]] = []
        self.calls: list[FakeCall] = []
        self.refuse: str | None = None
        self.gone = False
        self.numbered_again_from: list[tuple[str, int]] = []  # as Connection.numbered_again

    def __repr__(self) -> str:
        return f"FakeClient({self.name!r})"

    async def send_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notified.append((method, params))

    def numbered_again(self, session_id: str, seq: int) -> None:
        self.numbered_again_from.append((session_id, seq))

    async def show(self, question: Question) -> FakeCall:
        if self.gone:
            raise ClientGone()
        if self.refuse is not None:
            raise ClientFailed(self.refuse)
        call = FakeCall(question)
        self.calls.append(call)
        return call

    def last_call(self) -> FakeCall:
        return self.calls[-1]


@dataclass
class FakeSessions:
    """The use cases the room is lent: which sessions run a turn, and closing one (which
    ends its turn)."""

    running: set[str] = field(default_factory=set)
    closed: list[str] = field(default_factory=list)

    def busy(self, session_id: str) -> bool:
        return session_id in self.running

    async def close(self, session_id: str) -> None:
        self.closed.append(session_id)
        self.running.discard(session_id)


class ManualTimers:
    """The detached clock's schedule, fired by the test: no real waiting."""

    class Handle:
        def __init__(self) -> None:
            self.cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self) -> None:
        self.armed: list[tuple[float, Any, ManualTimers.Handle]] = []

    def __call__(self, delay: float, callback: Any) -> "ManualTimers.Handle":
        handle = ManualTimers.Handle()
        self.armed.append((delay, callback, handle))
        return handle

    def live(self) -> list[float]:
        return [delay for delay, _, handle in self.armed if not handle.cancelled]

    def fire(self) -> None:
        for _, callback, handle in self.armed:
            if not handle.cancelled:
                handle.cancelled = True
                callback()
