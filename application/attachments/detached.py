"""Sessions whose turn runs with no client attached: each gets a deadline
(IAC_CODE_DETACHED_TURN_TIMEOUT); a client attaching before it stops the clock, and when it
passes the caller's `expire` runs (it cancels the turn and closes the session)."""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

log = logging.getLogger(__name__)


class Cancellable(Protocol):
    def cancel(self) -> None: ...


# Run a callback after a delay (seconds); asyncio's call_later by default, a fake in tests.
Schedule = Callable[[float, Callable[[], None]], Cancellable]


def call_later(delay: float, callback: Callable[[], None]) -> Cancellable:
    return asyncio.get_running_loop().call_later(delay, callback)


class DetachedSessions:
    def __init__(
        self,
        timeout: float,
        expire: Callable[[str], Awaitable[None]],
        *,
        schedule: Schedule = call_later,
    ) -> None:
        self._timeout = timeout
        self._expire = expire
        self._schedule = schedule
        self._timers: dict[str, Cancellable] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, session_id: str) -> None:
        """The last client left while a turn runs: start its clock (once)."""
        if session_id not in self._timers:
            self._timers[session_id] = self._schedule(self._timeout, lambda: self._fire(session_id))

    def stop(self, session_id: str) -> None:
        """A client attached again (or the session is gone): no deadline."""
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()

    def waiting(self, session_id: str) -> bool:
        return session_id in self._timers

    def _fire(self, session_id: str) -> None:
        if self._timers.pop(session_id, None) is None:
            return
        log.info("no client came back to session %s in time: closing it", session_id)
        task = asyncio.ensure_future(self._expire(session_id))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: "asyncio.Task[None]") -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("closing a detached session failed: %s", exc)
