"""A new session stored with the standard library alone, while SQLAlchemy and the rest of
the agent still load (see bootstrap/early.py): the same row `SqlAlchemySessionStore.add`
writes for a session without messages, on a database already at the newest schema (and
only then: anything else is left to the full agent). It restates that insert's encoding: a
change to the sessions table or to its column types is made here too
(tests/integration/test_early_writes.py holds the two rows equal, column by column)."""

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.persistence.early_reads import NotReadableEarly
from adapters.persistence.mappers import session_to_row
from adapters.persistence.schema_head import REVISION_QUERY, is_head
from domain.session import Session

# The sessions table's JSON columns (tables.py): SQLAlchemy writes them with json.dumps,
# None included (JSON's null, not SQL NULL: the type's none_as_null is off).
_JSON_COLUMNS = frozenset({"config", "additional_directories", "mcp_servers", "system_prompt"})
# How SQLAlchemy's SQLite DateTime stores a moment (UtcDateTime: naive UTC).
_STORED = "%Y-%m-%d %H:%M:%S.%f"
# Waiting for another writer (the agent's start-up, another replica) beyond this is left
# to the agent, which waits as long as its engine does: the early answer must be quick.
_LOCK_WAIT_SECONDS = 0.2


class EarlySessionWriter:
    """Adds one new session per call, in a transaction of its own."""

    def __init__(self, database: Path) -> None:
        self._database = database

    def add(self, session: Session) -> None:
        """Raises NotReadableEarly when the full agent must store it (no database yet, an
        older schema, a session with history, the database busy or failing)."""
        if session.messages:
            raise NotReadableEarly("only a session without history is stored early")
        if not self._database.is_file():
            raise NotReadableEarly("no database yet")
        row = {name: _encoded(name, value) for name, value in session_to_row(session).items()}
        try:
            self._insert(row)
        except sqlite3.Error as exc:
            raise NotReadableEarly(f"the database did not take it: {exc}") from exc

    def _insert(self, row: dict[str, Any]) -> None:
        db = sqlite3.connect(self._database, timeout=_LOCK_WAIT_SECONDS, isolation_level=None)
        try:
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA synchronous=FULL")  # as the agent's engine: survives power loss
            db.execute("BEGIN IMMEDIATE")
            try:
                if not is_head(db.execute(REVISION_QUERY)):
                    raise NotReadableEarly("the schema is not the newest")
                names = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                db.execute(f"INSERT INTO sessions ({names}) VALUES ({marks})", tuple(row.values()))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()


def _encoded(name: str, value: Any) -> Any:
    if name in _JSON_COLUMNS:
        return json.dumps(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).strftime(_STORED)
    return value
