"""SSE event ids: `<n>` or `<n>-<c1>.<c2>…`.

`n` numbers the connection's events (the in-memory replay goes by it). The optional tail
says, for each session on the connection in the order they joined it, the newest journal
number (`_meta.iac_code.seq`) the client has once it has this event. Clients send the id
back unread (`Last-Event-ID`), so a server that restarted learns from it exactly what each
session's stream still owes the client."""

import re
from dataclasses import dataclass

_ID = re.compile(r"([0-9]{1,18})(?:-([0-9]{1,18}(?:\.[0-9]{1,18}){0,999}))?")


@dataclass(frozen=True, slots=True)
class EventId:
    number: int
    cursors: tuple[int, ...] | None = None  # None: the id had no session part


def parse_event_id(text: str) -> EventId | None:
    """The id, or None if it is not one this server writes."""
    match = _ID.fullmatch(text)
    if match is None:
        return None
    number, tail = match.groups()
    cursors = None if tail is None else tuple(int(c) for c in tail.split("."))
    return EventId(int(number), cursors)


def cursor_tag(cursors: list[int]) -> bytes:
    """What follows the number in an id (nothing while no session has a cursor)."""
    if not cursors:
        return b""
    return b"-" + b".".join(b"%d" % c for c in cursors)
