"""Work on a thread that does not keep the process alive: the agent's load, which a client
that closes stdin must not wait for (acp-tck ACP-SHUTDOWN-001). An executor's thread is
joined before asyncio.run returns and again at exit; this one is left to end with the
process, mid-import or mid-migration (as a crash would leave it: the migration's lock
and the schema's version make the next start finish it)."""

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def on_daemon_thread(work: Callable[[], T], name: str) -> "asyncio.Future[T]":
    """`work`'s outcome, on the running loop, from a daemon thread of its own."""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: Exception | None) -> None:
        if outcome.done():  # cancelled meanwhile: nobody waits
            return
        if error is not None:
            outcome.set_exception(error)
        else:
            outcome.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result, error = work(), None
        except Exception as exc:
            result, error = None, exc
        # A loop already closed: the process is ending, nobody waits.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return outcome
