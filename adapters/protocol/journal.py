"""The session journal: every live `session/update` is numbered per session and kept, so
that a client that was away is sent exactly what it missed.

Cost on the streaming path: a number from memory (the stored maximum is read once per
session per process) and an append to a list. The list is written in batches, one
transaction each, every `flush_seconds` or `flush_events` updates, and on `flush()` (a
turn's end, shutdown, before a replay is read). The crash window is the batch not yet
written: a client whose cursor is ahead of what was stored (or that falls into a gap a
failed write left) is answered like one whose cursor is too old, never with a gap."""

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError, encode
from application.ports.update_journal import NewUpdate, UpdateJournalStore

log = logging.getLogger(__name__)

META_KEY = "iac_code"  # our part of `_meta` (ACP leaves `_meta` to implementations)


class CursorExpired(Exception):
    """The updates after a cursor are not all kept: the client must `session/load`."""

    def __init__(self, session_id: str, after: int, oldest: int, newest: int) -> None:
        self.session_id = session_id
        self.after = after
        self.oldest = oldest
        self.newest = newest
        self.reason = "cursor_ahead" if after > newest else "cursor_expired"
        super().__init__(
            f"session {session_id}: updates after {after} are not kept (kept: "
            f"{oldest}..{newest}); session/load it without a cursor"
        )

    def data(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "sessionId": self.session_id,
            "after": self.after,
            "oldest": self.oldest,
            "newest": self.newest,
            "hint": "session/load without _meta.iac_code.after",
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalTerms:
    flush_seconds: float = 0.15
    flush_events: int = 200
    keep_events: int = 10_000  # per session
    keep_seconds: float = 7 * 86_400
    prune_every_seconds: float = 300.0  # how often old updates are looked for
    max_pending: int = 20_000  # unwritten updates held while the database fails


def _encode(params: dict[str, Any]) -> str:
    # The wire's encoder (orjson; a lone surrogate is repaired): valid UTF-8 text, which
    # PostgreSQL takes, at a fraction of json.dumps' cost per streamed delta.
    return encode(params)[:-1].decode()


def seq_of(params: dict[str, Any]) -> int | None:
    meta = params.get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    seq = ours.get("seq") if isinstance(ours, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def with_meta(params: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """`params` with `fields` in `_meta.iac_code`, other `_meta` kept (nothing changed)."""
    meta = params.get("_meta")
    if meta is None:  # the usual case, made directly
        return {**params, "_meta": {META_KEY: fields}}
    meta = dict(meta) if isinstance(meta, dict) else {}
    ours = meta.get(META_KEY)
    meta[META_KEY] = {**(ours if isinstance(ours, dict) else {}), **fields}
    return {**params, "_meta": meta}


class UpdateJournal:
    """The `UpdateLog` of SessionChannels: `record` is called once per live update, before
    it goes to the session's clients, and returns what they are sent."""

    def __init__(
        self,
        store: UpdateJournalStore,
        now: Callable[[], datetime],
        terms: JournalTerms | None = None,
    ) -> None:
        self._store = store
        self._now = now
        self._terms = terms or JournalTerms()
        self._next: dict[str, int] = {}
        self._loading: dict[str, asyncio.Future[int]] = {}
        self._pending: list[NewUpdate] = []
        self._pruned_below: dict[str, int] = {}
        self._writing = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._pruned_at: datetime | None = None
        self._flush_due = False  # a flush task is spawned and has not started writing

    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        seq = self._next.get(session_id)
        if seq is None:
            seq = await self._first_seq(session_id)
        self._next[session_id] = seq + 1
        stamped = with_meta(params, seq=seq)
        self._pending.append((session_id, seq, _encode(stamped)))
        self._schedule()
        return stamped

    def follow_on(self, session_id: str, seq: int) -> None:
        """Another replica numbered the session's updates up to `seq`: what this one
        numbers next comes after it (its own count may be older)."""
        if self._next.get(session_id, 0) <= seq:
            self._next[session_id] = seq + 1

    def last_seq(self, session_id: str) -> int | None:
        """The newest number given in this process (None: none yet)."""
        seq = self._next.get(session_id)
        return None if seq is None else seq - 1

    async def missed(self, session_id: str, after: int) -> list[dict[str, Any]]:
        """The updates after `after`, in order, as they were sent; CursorExpired unless
        every one of them is kept."""
        await self.flush()
        known = self.last_seq(session_id)
        window = await self._store.window(session_id, after, self._terms.keep_events + 1)
        newest = max(window.newest, known or 0)
        seqs = [u.seq for u in window.updates]
        complete = seqs == list(range(after + 1, newest + 1))
        if after < 0 or after > newest or not complete:
            raise CursorExpired(session_id, after, window.oldest, newest)
        return [json.loads(u.params) for u in window.updates]

    async def newest_containing(self, session_id: str, *pieces: str) -> dict[str, Any] | None:
        """The newest update of the session whose text holds every piece, as sent (what
        waits to be written is written first)."""
        await self.flush()
        found = await self._store.newest_containing(session_id, *pieces)
        return None if found is None else cast(dict[str, Any], json.loads(found))

    async def flush(self) -> None:
        """Write every update recorded so far (one transaction per batch)."""
        self._cancel_timer()
        async with self._writing:
            self._flush_due = False
            while self._pending:
                batch, self._pending = self._pending, []
                if not await self._write(batch):
                    return
            await self._prune()

    def flush_soon(self) -> None:
        """Write what is recorded without waiting for the timer (e.g. a turn ended)."""
        if self._pending:
            self._cancel_timer()
            self._spawn_flush()

    async def aclose(self) -> None:
        await self.flush()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _first_seq(self, session_id: str) -> int:
        """Numbers continue after the stored ones; concurrent first updates share one read."""
        loading = self._loading.get(session_id)
        if loading is None:
            loading = asyncio.get_running_loop().create_future()
            self._loading[session_id] = loading
            try:
                newest = await self._store.newest(session_id)
            except Exception as exc:  # numbering must not stop the stream: start after 0
                log.warning("journal: could not read session %s's last number: %s", session_id, exc)
                newest = 0
            finally:
                del self._loading[session_id]
            self._pruned_below.setdefault(session_id, 0)
            loading.set_result(newest)
            return self._next.get(session_id, newest + 1)
        await asyncio.shield(loading)
        return self._next[session_id]

    def _schedule(self) -> None:
        if len(self._pending) >= self._terms.flush_events:
            if not self._flush_due:  # one waiting flush takes all that arrives meanwhile
                self._cancel_timer()
                self._spawn_flush()
        elif self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._terms.flush_seconds, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._spawn_flush()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _spawn_flush(self) -> None:
        self._flush_due = True
        task = asyncio.get_running_loop().create_task(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(self, batch: list[NewUpdate]) -> bool:
        try:
            # One time for the batch: within a flush interval of each update's, which is
            # all that pruning by age needs.
            await self._store.append(self._now(), batch)
        except Exception as exc:
            # Kept for the next try, within a bound: what is dropped leaves a gap, and a
            # cursor before a gap is answered as expired (never replayed with the hole).
            self._pending = (batch + self._pending)[-self._terms.max_pending :]
            log.warning("journal: %d updates not written yet: %s", len(self._pending), exc)
            if self._timer is None:
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(self._terms.flush_seconds * 10, self._on_timer)
            return False
        for session_id in {u[0] for u in batch}:
            await self._prune_session(session_id)
        return True

    async def _prune_session(self, session_id: str) -> None:
        """Keep the newest `keep_events`; deleting in steps of a quarter of that, so that
        a long turn prunes now and then, not after every batch."""
        keep = self._terms.keep_events
        below = self._next[session_id] - keep
        if below - self._pruned_below.get(session_id, 0) < max(1, keep // 4):
            return
        try:
            await self._store.prune(session_id, below)
        except Exception as exc:  # pruning again later does the same
            log.warning("journal: pruning session %s failed: %s", session_id, exc)
            return
        self._pruned_below[session_id] = below

    async def _prune(self) -> None:
        now = self._now()
        every = timedelta(seconds=self._terms.prune_every_seconds)
        if self._pruned_at is not None and now - self._pruned_at < every:
            return
        self._pruned_at = now
        try:
            await self._store.prune_older_than(now - timedelta(seconds=self._terms.keep_seconds))
        except Exception as exc:
            log.warning("journal: pruning old updates failed: %s", exc)


def cursor_of(params: dict[str, Any] | None) -> int | None:
    """`_meta.iac_code.after` of a session/load or session/resume: the last seq the client
    has (None: no cursor). Anything but a non-negative integer is refused."""
    meta = (params or {}).get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    if not isinstance(ours, dict) or "after" not in ours:
        return None
    after = ours["after"]
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: _meta.iac_code.after must be a non-negative integer.",
            {"field": "_meta.iac_code.after", "reason": "invalid_cursor"},
        )
    return after


def expired_error(exc: CursorExpired) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {exc}", exc.data())


async def missed_after(
    journal: UpdateJournal | None, session_id: str, after: int
) -> list[dict[str, Any]]:
    """The journaled updates after a load/resume cursor; one the journal cannot serve (or a
    server keeping none) is refused with -32602."""
    if journal is None:
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: this server keeps no journal; session/load without a cursor.",
            {"reason": "cursor_expired", "sessionId": session_id},
        )
    try:
        return await journal.missed(session_id, after)
    except CursorExpired as exc:
        raise expired_error(exc) from None
