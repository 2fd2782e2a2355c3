"""Sending a session's live updates to the replicas that follow it (issue 32).

The relay looks each numbered update's session up in `routes` (one dict lookup, a miss for
a session nobody else follows); an update of a session other replicas follow is queued
here, and one task sends the queue in order, many updates per NOTIFY, on each follower's
own channel (`iac_code_up_<hash of its id>`). The turn never waits for it. An update too big for a
notification is sent as its number alone, after the journal is flushed: the follower reads
it from there. Updates that could not be published are owed: once signals go through
again, each session's newest number is sent alone and the follower reads the rest from the
journal.
"""

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, cast

from adapters.cluster.relaying import Relaying
from adapters.cluster.routes import Route, updates_channel
from adapters.protocol.journal import seq_of
from adapters.protocol.jsonrpc import encode
from application.ports.cluster_signals import MAX_PAYLOAD

log = logging.getLogger(__name__)

_Entry = tuple[str, int, bytes]  # a session, a number, the entry as sent
_Outgoing = tuple[str, str, int, dict[str, Any]]  # a target, a session, a number, params
_RETRY_SECONDS = 0.5


class Sender:
    def __init__(self, relaying: Relaying) -> None:
        self._me = relaying.replica_id
        self._journal = relaying.journal
        self._signals = relaying.signals
        self._terms = relaying.terms
        self._outbox: list[_Outgoing] = []
        self._wake = asyncio.Event()
        self._owed: dict[str, dict[str, int]] = {}  # per follower: unsignalled newest seqs
        self._retrying = False

    def forward(self, route: Route, session_id: str, params: dict[str, Any]) -> None:
        """A numbered update of a session others follow (the streaming path: no await)."""
        seq = seq_of(params)
        if seq is None:
            return
        if route.inbound is not None and seq > route.inbound.last and not route.inbound.queue:
            route.inbound.last = seq  # numbered here: not to be filled from the journal
            route.inbound.by = None
        if not route.targets:
            return
        if len(self._outbox) >= self._terms.max_queued:
            del self._outbox[: len(self._outbox) // 2]  # the followers fill these in
        for target in route.targets:
            self._outbox.append((target, session_id, seq, params))
        self._wake.set()

    async def run(self) -> None:
        """Send what is queued, whenever something is."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._send_queued()

    async def _send_queued(self) -> None:
        batch, self._outbox = self._outbox, []
        by_target, alone = self._entries(batch)
        if alone:
            try:
                await self._journal.flush()  # the follower reads those from there
            except Exception as exc:
                log.warning("journal not flushed before a signal: %s", exc)
        self._owed = {}
        for target, entries in by_target.items():
            await self._publish(target, entries)

    def _entries(self, batch: list[_Outgoing]) -> tuple[dict[str, list[_Entry]], bool]:
        """Each target's entries (owed numbers first), and whether any is a number alone."""
        by_target: dict[str, list[_Entry]] = {}
        alone = bool(self._owed)
        for target, owed in self._owed.items():  # numbers alone: read from the journal
            by_target[target] = [(sid, seq, _json([sid, seq])) for sid, seq in owed.items()]
        for target, session_id, seq, params in batch:
            entry = _json([session_id, seq, params])
            if len(entry) > MAX_PAYLOAD - 100:
                entry, alone = _json([session_id, seq]), True
            by_target.setdefault(target, []).append((session_id, seq, entry))
        return by_target, alone

    async def _publish(self, target: str, entries: list[_Entry]) -> None:
        for chunk in _chunks(self._me, entries):
            try:
                await self._signals.publish(updates_channel(target), chunk.payload)
            except Exception as exc:
                log.warning("updates to replica %s not signalled yet: %s", target, exc)
                self._owe(target, chunk.newest)
        if self._owed.get(target) and not self._retrying:
            self._retrying = True
            asyncio.get_running_loop().call_later(_RETRY_SECONDS, self._retry)

    def _owe(self, target: str, newest: dict[str, int]) -> None:
        owed = self._owed.setdefault(target, {})
        for session_id, seq in newest.items():
            owed[session_id] = max(owed.get(session_id, 0), seq)

    def _retry(self) -> None:
        self._retrying = False
        self._wake.set()


@dataclass(slots=True)
class _Chunk:
    payload: str
    newest: dict[str, int]  # each session's newest number in it


def _chunks(sender: str, entries: list[_Entry]) -> list[_Chunk]:
    """The entries in as few notifications as they fit in, in order."""
    head = b'{"r":' + _json(sender) + b',"u":['
    chunks: list[_Chunk] = []
    part: list[bytes] = []
    newest: dict[str, int] = {}
    size = len(head) + 2
    for session_id, seq, entry in entries:
        if part and size + len(entry) + 1 > MAX_PAYLOAD:
            chunks.append(_Chunk((head + b",".join(part) + b"]}").decode(), newest))
            part, newest, size = [], {}, len(head) + 2
        part.append(entry)
        newest[session_id] = max(newest.get(session_id, 0), seq)
        size += len(entry) + 1
    if part:
        chunks.append(_Chunk((head + b",".join(part) + b"]}").decode(), newest))
    return chunks


def _json(value: object) -> bytes:
    """The wire's encoder (orjson, strict), without its line end."""
    return encode(cast(dict[str, Any], value))[:-1]
