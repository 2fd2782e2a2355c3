"""Taking up an HTTP connection after a restart: its record, the session's turn state, and
the journaled updates it missed, as the transport's Revival asks for them."""

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from adapters.protocol.agent import AcpAgent
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection
from adapters.protocol.journal import UpdateJournal, with_meta
from application.ports.leases import TurnLeases
from application.ports.update_journal import ConnectionRecord, ConnectionRecords
from domain.ids import SessionId

log = logging.getLogger(__name__)

TurnState = Callable[[str], Awaitable[str]]  # "idle" | "running" | "awaiting_permission"


def turn_message(session_id: str, state: str) -> dict[str, Any]:
    """A `session_info_update` that changes nothing but says the turn's state in `_meta`:
    the first event a reconnected client gets for the session. Not journaled: it is this
    connection's news, not the session's."""
    params = {"sessionId": session_id, "update": {"sessionUpdate": "session_info_update"}}
    return notification(with_meta(params, turn={"state": state}))


def notification(params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


class ConnectionRevival:
    def __init__(
        self,
        *,
        agent: AcpAgent,
        journal: UpdateJournal,
        records: ConnectionRecords,
        turn_state: TurnState,
        now: Callable[[], datetime],
        keep_seconds: float,
    ) -> None:
        self._agent = agent
        self._journal = journal
        self._records = records
        self._turn_state = turn_state
        self._now = now
        self._keep = timedelta(seconds=keep_seconds)
        self._pruned = False

    async def stored(self, connection_id: str) -> ConnectionRecord | None:
        return await self._records.get(connection_id)

    async def save(self, record: ConnectionRecord) -> None:
        if not self._pruned:  # records of clients that never came back: once per process
            self._pruned = True
            await self._records.prune_older_than(self._now() - self._keep)
        await self._records.save(record)

    async def forget(self, connection_id: str) -> None:
        await self._records.delete(connection_id)

    async def reattach(self, session_id: str, peer: Connection) -> None:
        await self._agent.restore_attachment(peer, session_id, tell_state=False)

    async def catch_up(self, session_id: str, after: int) -> list[dict[str, Any]]:
        missed = await self._journal.missed(session_id, after)
        state = await self._turn_state(session_id)
        return [turn_message(session_id, state), *(notification(p) for p in missed)]


class TurnStates:
    """A session's turn as a reconnecting client should see it: running here (or waiting
    for a permission answer), running on another replica (its lease is live), or idle. A
    turn that ran in a process that stopped is gone: idle."""

    def __init__(
        self,
        *,
        busy: Callable[[str], bool],
        awaiting: Callable[[str], bool],
        holder_elsewhere: Callable[[str], Awaitable[bool]],
    ) -> None:
        self._busy = busy
        self._awaiting = awaiting
        self._elsewhere = holder_elsewhere

    async def __call__(self, session_id: str) -> str:
        if self._busy(session_id):
            return "awaiting_permission" if self._awaiting(session_id) else "running"
        try:
            return "running" if await self._elsewhere(session_id) else "idle"
        except Exception as exc:  # the database is out: say what is known here
            log.warning("turn state of %s: lease not readable: %s", session_id, exc)
            return "idle"


def held_elsewhere(
    leases: TurnLeases, now: Callable[[], datetime], holder: str
) -> Callable[[str], Awaitable[bool]]:
    """Whether another process holds a live lease on the session's turn (PostgreSQL)."""

    async def check(session_id: str) -> bool:
        live = await leases.live_holder(SessionId(session_id), now())
        return live is not None and live != holder

    return check


def awaiting_permission(channels: SessionChannels) -> Callable[[str], bool]:
    """Whether the session's turn waits for a permission answer (the channels know)."""
    return lambda session_id: channels.turn_state(session_id)["state"] == "awaiting_permission"
