"""Work a replica starts beside the request or signal that caused it (serving a routed
request, mirroring a question): each task is kept referenced until it ends, all can be
cancelled together, and a failure is logged rather than lost — a storage outage as a
warning, anything else as an error."""

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from application.errors import StorageError


class SideTasks:
    def __init__(self, what: str, log: logging.Logger) -> None:
        self._what = what  # how the log names the work
        self._log = log
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Awaitable[Any]) -> "asyncio.Task[Any]":
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def _done(self, task: "asyncio.Task[Any]") -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        if isinstance(error := task.exception(), StorageError):
            self._log.warning("%s: %s", self._what, error)
        elif error is not None:
            self._log.error("%s failed", self._what, exc_info=error)
