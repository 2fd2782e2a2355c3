"""Taking up an HTTP connection after a restart: its record, the session's turn state, and
the journaled updates it missed, as the transport's Revival asks for them. (Which state a
reconnecting client is told is the room's: application.attachments.turn_state.)"""

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from adapters.protocol.connection import Connection
from adapters.protocol.journal import UpdateJournal, with_meta
from adapters.protocol.rendering import UpdateRendering
from application.attachments.ownership import Role
from application.ports.update_journal import ConnectionRecord, ConnectionRecords

TurnStateOf = Callable[[str], Awaitable[str]]  # "idle" | "running" | "awaiting_permission"


class Restores(Protocol):
    """The dispatcher's side of it: attach a restored connection without a replay."""

    @abstractmethod
    async def restore_attachment(
        self, peer: Connection, session_id: str, cwd: str | None = None, *, tell_state: bool = True
    ) -> Role: ...


class ConnectionRevival:
    def __init__(
        self,
        *,
        agent: Restores,
        rendering: UpdateRendering,
        journal: UpdateJournal,
        records: ConnectionRecords,
        turn_state: TurnStateOf,
        now: Callable[[], datetime],
        keep_seconds: float,
    ) -> None:
        self._agent = agent
        self._rendering = rendering
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
        return [self._turn_message(session_id, state), *(self._notification(p) for p in missed)]

    def _turn_message(self, session_id: str, state: str) -> dict[str, Any]:
        """An update that changes nothing but says the turn's state in `_meta`: the first
        event a reconnected client gets for the session. Not journaled: it is this
        connection's news, not the session's."""
        params = self._rendering.state_only(session_id)
        return self._notification(with_meta(params, turn={"state": state}))

    def _notification(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": self._rendering.method, "params": params}
