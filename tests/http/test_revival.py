"""The registry taking up stored connections, with a revival of the test's: what is refused
(and how), and that a refused take-up leaves nothing behind."""

from typing import Any

import pytest

from adapters.http.errors import HttpError
from adapters.http.event_ids import EventId
from adapters.http.registry import ConnectionRegistry
from adapters.http.revival import Revival
from adapters.protocol.connection import Connection
from adapters.protocol.journal import CursorExpired
from application.errors import StorageError
from application.ports.update_journal import ConnectionRecord
from tests.http.conftest import FAST, FakeAgent


class Revived(Revival):
    def __init__(self, *records: ConnectionRecord) -> None:
        self.records = {r.id: r for r in records}
        self.attached: list[tuple[str, Connection]] = []
        self.saved: list[ConnectionRecord] = []
        self.kept = {"a": 5, "b": 9}  # each session's newest number
        self.failing: Exception | None = None  # raised by catch_up
        self.lookup_fails = False

    async def stored(self, connection_id: str) -> ConnectionRecord | None:
        if self.lookup_fails:
            raise StorageError("the database is unreachable")
        return self.records.get(connection_id)

    async def save(self, record: ConnectionRecord) -> None:
        self.saved.append(record)

    async def forget(self, connection_id: str) -> None:
        self.records.pop(connection_id, None)

    async def reattach(self, session_id: str, peer: Connection) -> None:
        self.attached.append((session_id, peer))

    async def catch_up(self, session_id: str, after: int) -> list[dict[str, Any]]:
        if self.failing is not None:
            raise self.failing
        newest = self.kept[session_id]
        if after > newest:
            raise CursorExpired(session_id, after, 1, newest)
        return [
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": session_id,
                    "update": {"sessionUpdate": "session_info_update"},
                    "_meta": {"iac_code": {"seq": seq}},
                },
            }
            for seq in range(after + 1, newest + 1)
        ]


RECORD = ConnectionRecord(id="old", client_capabilities={"fs": {}}, sessions=("a", "b"))


def registry(revival: Revived) -> ConnectionRegistry:
    async def source() -> Revival:
        return revival

    return ConnectionRegistry(FakeAgent(), FAST, revival=source)


async def test_a_stored_connection_is_taken_up_where_the_client_is() -> None:
    revival = Revived(RECORD)
    connections = registry(revival)
    taken = await connections.find("old", EventId(40, (3, 9)))
    assert connections.get("old") is taken
    assert [s for s, _ in revival.attached] == ["a", "b"]
    assert taken.protocol.client_capabilities == {"fs": {}}
    assert taken.outbox.last_id == 42  # a's 4 and 5, numbered after the client's 40
    assert taken.cursors == {"a": 5, "b": 9}
    assert await connections.find("old", None) is taken  # live now: as any connection
    await connections.close_all("test over")
    assert revival.saved[-1].sessions == ("a", "b")


@pytest.mark.parametrize(
    ("event_id", "reason"),
    [
        (None, "last_event_id_required"),
        (EventId(40), "cursor_mismatch"),
        (EventId(40, (3,)), "cursor_mismatch"),
        (EventId(40, (3, 10)), "cursor_ahead"),
    ],
)
async def test_what_cannot_be_resumed_exactly_is_409_and_leaves_nothing(
    event_id: EventId | None, reason: str
) -> None:
    revival = Revived(RECORD)
    connections = registry(revival)
    with pytest.raises(HttpError) as refused:
        await connections.find("old", event_id)
    assert refused.value.status == 409
    assert refused.value.body["reason"] == reason
    assert refused.value.body["action"] == "session/load"
    assert revival.attached == []
    with pytest.raises(HttpError) as unknown:
        connections.get("old")
    assert unknown.value.status == 400


async def test_an_id_never_stored_is_400_and_storage_trouble_503() -> None:
    revival = Revived(RECORD)
    connections = registry(revival)
    with pytest.raises(HttpError) as unknown:
        await connections.find("nobody", EventId(1, (1, 1)))
    assert unknown.value.status == 400
    revival.failing = StorageError("down")
    with pytest.raises(HttpError) as down:
        await connections.find("old", EventId(40, (3, 9)))
    assert down.value.status == 503
    revival.lookup_fails = True
    with pytest.raises(HttpError) as lookup:
        await connections.find("old", EventId(40, (3, 9)))
    assert lookup.value.status == 503
