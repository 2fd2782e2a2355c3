"""The early PostgreSQL list's connections (adapters/persistence/early_postgres.py reads on
them): asyncpg and the statement's text, and nothing of the application, so the first one
can be opened while the modules the read needs are still being imported
(bootstrap/early.py)."""

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg

from adapters.persistence.postgres_text import encode_text
from adapters.persistence.schema_head import REVISION_QUERY

_PREFIXES = ("postgresql+asyncpg://", "postgresql://")
# What pg_stat_activity shows for these short-lived connections.
APP_NAME = "iac-code early list"
# Bounds for the early answer: past them the full agent answers (and says what is wrong).
_CONNECT_SECONDS = 2.0
QUERY_SECONDS = 2.0
# What the driver may raise for an unreachable, refusing or unexpected server.
DRIVER_ERRORS = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)
# alembic's revision rows (schema_head.REVISION_QUERY) as one array.
_REVISIONS = f"SELECT array_agg(version_num) AS revisions FROM ({REVISION_QUERY}) AS v"


def postgres_dsn(url: str) -> str | None:
    """asyncpg's DSN for a plain `postgresql(+asyncpg)://user@host:port/db` URL; None for
    anything with query parameters (SQLAlchemy and asyncpg may read those differently)."""
    prefix = next((p for p in _PREFIXES if url.startswith(p)), None)
    rest = url[len(prefix) :] if prefix else ""
    if not rest or "?" in rest or "#" in rest:
        return None
    return f"postgresql://{rest}"


@dataclass(frozen=True, slots=True)
class Opened:
    """A connection, and the listing's statements prepared on it (SQL -> statement)."""

    db: Any
    statements: dict[str, Any]


class EarlyConnections:
    """One connection per read, opened and closed. The next one may be opened ahead
    (`open_ahead`), with the listing's statements prepared: its read then waits for one
    round trip only."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._spare: asyncio.Task[Opened] | None = None

    def open_ahead(self, keep: float) -> "asyncio.Future[Opened]":
        """Open the next read's connection now (its round trips are then off the request's
        path); closed unused after `keep` seconds (the agent answers by then). Returns the
        opening, done once the connection is ready or has failed (the read then tries its
        own)."""
        if self._spare is not None:
            return self._spare
        loop = asyncio.get_running_loop()
        self._spare = loop.create_task(self._open_prepared())
        self._spare.add_done_callback(_seen)
        loop.call_later(keep, self._drop_spare)
        return self._spare

    async def take(self) -> Opened:
        """The connection opened ahead if it opened, else a new one (without statements)."""
        spare, self._spare = self._spare, None
        if spare is not None:
            with contextlib.suppress(*DRIVER_ERRORS):
                return await spare
        return Opened(await self._connect(), {})

    def _drop_spare(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.add_done_callback(_close_opened)

    async def _connect(self) -> Any:
        return await asyncpg.connect(
            self.dsn, timeout=_CONNECT_SECONDS, server_settings={"application_name": APP_NAME}
        )

    async def _open_prepared(self) -> Opened:
        db = await self._connect()
        try:
            statements = {sql: await db.prepare(sql, timeout=QUERY_SECONDS) for sql in _SHAPES}
            # asyncpg prepares inside an implicit transaction it leaves open (Flush, not
            # Sync): while unused, the connection would hold the tables' share locks and
            # stall a migration or TRUNCATE of them. A simple query closes it.
            await db.execute("SELECT 1", timeout=QUERY_SECONDS)
        except BaseException:
            close_later(db)
            raise
        return Opened(db, statements)


# Connections being closed: the answer need not wait for the server's goodbye (each round
# trip is a wait for the event loop's thread while the agent loads beside it).
_closing: set["asyncio.Task[None]"] = set()


def close_later(db: Any) -> None:
    task = asyncio.get_running_loop().create_task(db.close(timeout=QUERY_SECONDS))
    _closing.add(task)
    task.add_done_callback(_closed)


def _closed(task: "asyncio.Task[None]") -> None:
    _closing.discard(task)
    _seen(task)  # a failed goodbye changes nothing: the read is done


def _close_opened(connecting: "asyncio.Task[Opened]") -> None:
    if not connecting.cancelled() and connecting.exception() is None:
        close_later(connecting.result().db)


def _seen(task: "asyncio.Task[Any]") -> None:
    """A failure here is answered by the next read's own connection, not logged as lost."""
    if not task.cancelled():
        task.exception()


def page_query(
    cwd: str | None, after: tuple[datetime, str] | None, limit: int
) -> tuple[str, tuple[object, ...]]:
    """One statement, one round trip: the schema's revisions on every row (and on a lone
    row of NULLs when no session matches), then the page, newest update first."""
    where, args = ["deleted_at IS NULL", "spawned_by IS NULL"], list[object]()
    if cwd is not None:
        # As adapters/persistence/dialect.py's same_text: the index is over the cwd's hash.
        args.append(encode_text(cwd))
        where.append(f"md5(cwd) = md5(${len(args)}::text) AND cwd = ${len(args)}::text")
    if after is not None:
        args += [after[0].astimezone(UTC).replace(tzinfo=None), encode_text(after[1])]
        moment, last_id = f"${len(args) - 1}", f"${len(args)}::text"
        where.append(f"(updated_at < {moment} OR (updated_at = {moment} AND id < {last_id}))")
    args.append(limit)
    page = (
        "SELECT id, cwd, title, updated_at, message_count, additional_directories "
        f"FROM sessions WHERE {' AND '.join(where)} "
        f"ORDER BY updated_at DESC, id DESC LIMIT ${len(args)}"
    )
    sql = (
        f"SELECT r.revisions, s.* FROM ({_REVISIONS}) AS r LEFT JOIN LATERAL ({page}) AS s "
        "ON true ORDER BY s.updated_at DESC, s.id DESC"
    )
    return sql, tuple(args)


# The statement's four shapes (with or without a cwd, a cursor), prepared ahead.
_SOME_MOMENT = (datetime(2000, 1, 1, tzinfo=UTC), "")
_SHAPES = tuple(
    page_query(cwd, after, 1)[0] for cwd in (None, "") for after in (None, _SOME_MOMENT)
)
