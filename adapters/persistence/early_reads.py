"""Stored sessions listed with the standard library alone, while SQLAlchemy and the rest
of the agent still load (see bootstrap/early.py): the same rows, in the same order, as
`SqlAlchemySessionListing.list_page`. Reads only a database already at the newest
schema; anything else is left to the full agent. It restates that query: a change to it
or to the sessions table is made here too (tests/integration/test_early_reads.py holds
the two equal)."""

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.persistence.schema_head import REVISION_QUERY, is_head
from application.ports.session_listing import SessionSummary
from domain.ids import SessionId
from domain.text import valid_data

_PREFIXES = ("sqlite+aiosqlite:///", "sqlite:///")
# How SQLAlchemy's SQLite DateTime stores a moment (UtcDateTime: naive UTC).
_STORED = "%Y-%m-%d %H:%M:%S.%f"


class NotReadableEarly(Exception):
    """The full agent must answer: not a plain SQLite file at the newest schema."""


def database_file(url: str) -> Path | None:
    """The file of a plain `sqlite(+aiosqlite):///path` URL; None for anything fancier."""
    prefix = next((p for p in _PREFIXES if url.startswith(p)), None)
    if prefix is None:
        return None
    path = url[len(prefix) :]
    if not path or path == ":memory:" or any(c in path for c in "?%#"):
        return None
    return Path(path)


class EarlySessionPages:
    """`list_page` over one read-only connection per call: no lock taken, nothing written."""

    def __init__(self, database: Path) -> None:
        self._database = database

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
        if not self._database.is_file():
            raise NotReadableEarly("no database yet")
        uri = f"{self._database.absolute().as_uri()}?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=0.1)
        try:
            if not is_head(db.execute(REVISION_QUERY)):
                raise NotReadableEarly("the schema is not the newest")
            rows = db.execute(*_query(cwd, after, limit)).fetchall()
        finally:
            db.close()
        return [_summary(*row) for row in rows]


def _query(
    cwd: str | None, after: tuple[datetime, str] | None, limit: int
) -> tuple[str, tuple[object, ...]]:
    where, args = ["deleted_at IS NULL", "spawned_by IS NULL"], []
    if cwd is not None:
        where.append("cwd = ?")
        args.append(cwd)
    if after is not None:
        updated = stored_moment(after[0])
        where.append("(updated_at < ? OR (updated_at = ? AND id < ?))")
        args += [updated, updated, after[1]]
    sql = (
        "SELECT id, cwd, title, updated_at, message_count, additional_directories "
        f"FROM sessions WHERE {' AND '.join(where)} "
        "ORDER BY updated_at DESC, id DESC LIMIT ?"
    )
    return sql, (*args, limit)


def _json(text: str | None) -> Any:
    """As the engine reads JSON columns (adapters/persistence/sqlite.py): repaired text."""
    return None if text is None else valid_data(json.loads(text))


def stored_moment(moment: datetime) -> str:
    """`moment` as SQLAlchemy's SQLite DateTime stores it (early_writes.py writes it so)."""
    return moment.astimezone(UTC).replace(tzinfo=None).strftime(_STORED)


def _summary(
    session_id: str, cwd: str, title: str | None, updated: str, count: int, directories: str | None
) -> SessionSummary:
    return SessionSummary(
        session_id=SessionId(session_id),
        cwd=cwd,
        title=title,
        updated_at=datetime.fromisoformat(updated).replace(tzinfo=UTC),
        message_count=count,
        additional_directories=tuple(_json(directories) or ()),
    )
