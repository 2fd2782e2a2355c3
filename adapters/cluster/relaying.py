"""What every part of the relay works with (adapters/cluster/relay.py), handed to each as
one object: this replica's id, its room and channels, the journal and its store, the
registry of who follows what, the signals, the turn leases, the clock, the terms, the map
of routes the parts share, and the tasks they start (cancelled together when it closes)."""

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapters.cluster.routes import RelayTerms, Route
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection
from adapters.protocol.journal import UpdateJournal
from application.attachments.room import Attachments
from application.ports.cluster_attachments import ClusterAttachments
from application.ports.cluster_signals import ClusterSignals
from application.ports.leases import TurnLeases
from application.ports.update_journal import UpdateJournalStore


@dataclass(frozen=True, slots=True, kw_only=True)
class Relaying:
    replica_id: str
    room: Attachments[Connection]
    channels: SessionChannels
    journal: UpdateJournal
    store: UpdateJournalStore
    registry: ClusterAttachments
    signals: ClusterSignals
    leases: TurnLeases
    now: Callable[[], datetime]
    terms: RelayTerms = field(default_factory=RelayTerms)
    # Each session followed here or by others: one dict lookup on the streaming path.
    routes: dict[str, Route] = field(default_factory=dict)
    _tasks: set["asyncio.Task[Any]"] = field(default_factory=set)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> "asyncio.Task[Any]":
        """Run `work` as a task kept until it ends, or until `cancel_tasks`."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def attached_here(self, session_id: str) -> bool:
        return bool(self.room.peers_of(session_id))

    async def cancel_tasks(self, *others: "asyncio.Task[Any] | None") -> None:
        """Cancel every task spawned (and `others`), and wait until each has ended."""
        tasks = [t for t in (*others, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
