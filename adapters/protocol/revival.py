"""Taking up an HTTP connection after a restart: its record, the session's turn state, and
the journaled updates it missed, as the transport's Revival asks for them. (Which state a
reconnecting client is told is the room's: application.attachments.turn_state.)"""

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from adapters.protocol.agent import AcpAgent
from adapters.protocol.connection import Connection
from adapters.protocol.journal import UpdateJournal, with_meta
from application.ports.update_journal import ConnectionRecord, ConnectionRecords

TurnStateOf = Callable[[str], Awaitable[str]]  # "idle" | "running" | "awaiting_permission"


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
        turn_state: TurnStateOf,
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
