"""SSE event ids with per-session journal cursors, and how a connection taken up after a
restart sends what it owes: held live updates after the catch-up, each once."""

from typing import Any

import pytest

from adapters.http.config import HttpConfig
from adapters.http.connection import HttpConnection
from adapters.http.event_ids import EventId, cursor_tag, parse_event_id
from adapters.protocol.connection import Connection, Dispatcher
from application.ports.update_journal import ConnectionRecord


class Idle(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        return {}

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        return None

    async def peer_closed(self, peer: Connection) -> None:
        return None


def update(session_id: str, seq: int | None, text: str = "x") -> dict[str, Any]:
    params: dict[str, Any] = {
        "sessionId": session_id,
        "update": {"sessionUpdate": "plan", "entries": [], "text": text},
    }
    if seq is not None:
        params["_meta"] = {"iac_code": {"seq": seq}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def connection(first_event: int = 1) -> tuple[HttpConnection, list[HttpConnection]]:
    changed: list[HttpConnection] = []
    made = HttpConnection(
        "c1",
        Idle(),
        HttpConfig(),
        lambda _: None,
        lambda: 0.0,
        on_change=changed.append,
        first_event=first_event,
    )
    return made, changed


async def frames(made: HttpConnection, after: int | None = None) -> list[str]:
    """The ids of the events buffered after `after`."""
    made.outbox.close()
    ids = []
    async for chunk in made.outbox.follow(after):
        ids += [line[4:] for line in chunk.decode().splitlines() if line.startswith("id: ")]
    return ids


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("7", EventId(7)),
        ("57-12", EventId(57, (12,))),
        ("57-12.0.40", EventId(57, (12, 0, 40))),
        ("57-", None),
        ("57-1.", None),
        ("-1", None),
        ("5²", None),
        ("1" * 19, None),
        ("x", None),
    ],
)
def test_event_ids_are_parsed_strictly(text: str, parsed: EventId | None) -> None:
    assert parse_event_id(text) == parsed


def test_the_tag_lists_the_cursors_in_order() -> None:
    assert cursor_tag([]) == b""
    assert cursor_tag([12, 40]) == b"-12.40"


async def test_ids_carry_each_sessions_newest_number_and_a_joining_session_is_saved() -> None:
    made, changed = connection()
    await made._send({"jsonrpc": "2.0", "id": 1, "result": {}})
    await made._send(update("a", 1))
    await made._send(update("b", 5))
    await made._send(update("a", 2))
    await made._send(update("a", None))  # not numbered: the tail is unchanged
    assert await frames(made) == ["1", "2-1", "3-1.5", "4-2.5", "5-2.5"]
    assert changed == [made, made]  # once per session joining
    assert made.record() == ConnectionRecord(
        id="c1", client_capabilities=None, sessions=("a", "b"), next_event=6
    )


async def test_a_taken_up_connection_sends_the_catch_up_then_held_updates_once() -> None:
    made, _ = connection(first_event=11)
    made.resume_from(ConnectionRecord(id="c1", sessions=("a", "b")), (3, 7))
    await made._send(update("a", 5))  # live while catching up: held
    await made._send(update("a", 6))
    await made._send(update("b", 8))
    await made.catch_up("a", [update("a", None, "turn"), update("a", 4), update("a", 5)])
    await made.catch_up("b", [update("b", None, "turn")])
    assert await frames(made) == [
        "11-3.7",  # the turn state
        "12-4.7",
        "13-5.7",
        "14-6.7",  # 5 came twice (caught up and held): sent once
        "15-6.7",
        "16-6.8",
    ]


async def test_numbering_goes_on_after_the_clients_last_event() -> None:
    made, _ = connection(first_event=58)
    await made._send(update("a", 1))
    assert made.outbox.last_id == 58
    assert await frames(made, 57) == ["58-1"]


async def test_a_number_given_again_is_sent_not_skipped_as_a_copy() -> None:
    """A replica that died showed this client updates 3 and 4 its journal never wrote; the
    session's next numberer gives 3 again (the turn-ended notice). A copy of an update the
    client has is still skipped, but not the update numbered again, nor what follows it."""
    made, _ = connection()
    await made._send(update("a", 3, "from the dead replica"))
    await made._send(update("a", 4, "from the dead replica"))
    await made._send(update("a", 4, "from the dead replica"))  # a copy: skipped
    made.protocol.numbered_again("a", 3)
    await made._send(update("a", 3, "the turn ended"))
    await made._send(update("a", 4, "the next turn"))
    assert await frames(made) == ["1-3", "2-4", "3-3", "4-4"]
