"""Stored sessions listed on PostgreSQL with asyncpg alone, while SQLAlchemy and the rest of
the agent still load (see bootstrap/early.py): the same rows, in the same order, as
`SqlAlchemySessionListing.list_page`, decoded as the engine decodes them
(adapters/persistence/postgres.py). Reads only a database already at the newest schema;
anything else is left to the full agent. It restates that query (in
early_postgres_opening.py, with the connections it runs on), as early_reads.py does for
SQLite: a change to it or to the sessions table is made there too
(tests/integration/test_early_postgres.py holds the two equal)."""

import asyncio
from datetime import UTC, datetime
from typing import Any

from adapters.persistence.early_postgres_opening import (
    DRIVER_ERRORS,
    QUERY_SECONDS,
    EarlyConnections,
    Opened,
    close_later,
    page_query,
)
from adapters.persistence.early_reads import NotReadableEarly
from adapters.persistence.json_columns import load_json
from adapters.persistence.postgres_text import decode_text
from adapters.persistence.schema_head import is_head
from application.ports.session_listing import SessionSummary
from domain.ids import SessionId


class EarlyPostgresPages:
    """`list_page` over one connection per call, opened and closed: nothing written. The
    first call's may be opened ahead (`connect_ahead`), while the agent still loads, with
    the listing's statements prepared: the call then waits for one round trip only.
    `connections`: where they come from, when one may be opening already."""

    def __init__(self, dsn: str, connections: EarlyConnections | None = None) -> None:
        self._connections = connections or EarlyConnections(dsn)

    def connect_ahead(self, keep: float) -> "asyncio.Future[Opened]":
        """See EarlyConnections.open_ahead: the opening, done once ready or failed."""
        return self._connections.open_ahead(keep)

    async def list_page(
        self,
        *,
        cwd: str | None,
        after: tuple[datetime, str] | None,
        limit: int,
        parent: str | None = None,
    ) -> list[SessionSummary]:
        if parent is not None:  # the agent lists a session's children
            raise NotReadableEarly("a filter the early path does not read")
        try:
            rows = await self._read(*page_query(cwd, after, limit))
        except DRIVER_ERRORS as exc:
            raise NotReadableEarly(f"PostgreSQL did not answer the early read: {exc}") from exc
        return [_summary(row) for row in rows]

    async def _read(self, sql: str, args: tuple[object, ...]) -> list[Any]:
        opened = await self._connections.take()
        prepared = opened.statements.get(sql)
        try:
            if prepared is not None:
                rows = await prepared.fetch(*args, timeout=QUERY_SECONDS)
            else:
                rows = await opened.db.fetch(sql, *args, timeout=QUERY_SECONDS)
        finally:
            close_later(opened.db)
        if not is_head((revision,) for revision in rows[0]["revisions"] or ()):
            raise NotReadableEarly("the schema is not the newest")
        return [row for row in rows if row["id"] is not None]


def _summary(row: Any) -> SessionSummary:
    title, directories = row["title"], row["additional_directories"]
    return SessionSummary(
        session_id=SessionId(decode_text(row["id"])),
        cwd=decode_text(row["cwd"]),
        title=None if title is None else decode_text(title),
        updated_at=row["updated_at"].replace(tzinfo=UTC),
        message_count=row["message_count"],
        # A JSON column: the engine's load_json, not the text codec.
        additional_directories=tuple((load_json(directories) if directories else None) or ()),
    )
