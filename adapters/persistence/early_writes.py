"""A new session stored with the standard library alone, while SQLAlchemy and the rest of
the agent still load (see bootstrap/early.py): the same row `SqlAlchemySessionStore.add`
writes for a session without messages, on a database at the newest schema (and only then:
anything else is left to the full agent). It restates that insert's encoding: a change to
the sessions table or to its column types is made here too
(tests/integration/test_early_writes.py holds the two rows equal, column by column).

A database that does not exist yet is created first, at the newest schema, from the DDL
sqlite_schema.py holds (what the agent's upgrade_to_head would create, under the same
lock): a new user's first session/new then waits for neither SQLAlchemy nor the agent."""

import fcntl
import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters.persistence.early_reads import NotReadableEarly, stored_moment
from adapters.persistence.mappers import session_to_row
from adapters.persistence.schema_head import REVISION_QUERY, SCHEMA_HEAD, is_head
from adapters.persistence.sqlite_schema import STATEMENTS
from domain.session import Session

# The sessions table's JSON columns (tables.py): SQLAlchemy writes them with json.dumps,
# None included (JSON's null, not SQL NULL: the type's none_as_null is off).
_JSON_COLUMNS = frozenset({"config", "additional_directories", "mcp_servers", "system_prompt"})
# Waiting for another writer (the agent's start-up, another replica) beyond this is left
# to the agent, which waits as long as its engine does: the early answer must be quick.
_LOCK_WAIT_SECONDS = 0.2


class EarlySessionWriter:
    """Adds one new session per call, in a transaction of its own."""

    def __init__(self, database: Path) -> None:
        self._database = database

    def add(self, session: Session) -> None:
        """Raises NotReadableEarly when the full agent must store it (an older schema, a
        session with history, the database busy or failing)."""
        if session.messages:
            raise NotReadableEarly("only a session without history is stored early")
        row = {name: _encoded(name, value) for name, value in session_to_row(session).items()}
        try:
            if not self._database.exists():
                self._create()
            self._insert(row)
        except (sqlite3.Error, OSError) as exc:
            raise NotReadableEarly(f"the database did not take it: {exc}") from exc

    def _create(self) -> None:
        """The database at the newest schema, in one transaction, under the lock the agent's
        upgrade_to_head takes (adapters/persistence/migrate.py): whoever comes second finds
        it made. Held by the agent already: left to it."""
        self._database.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{self._database}.migrate-lock", "a+b") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise NotReadableEarly("the agent is creating the database") from exc
            try:
                if not self._database.exists():  # else made while we took the lock
                    self._create_at_head()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _create_at_head(self) -> None:
        db = sqlite3.connect(self._database, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")  # as the agent's engine leaves it
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in STATEMENTS:
                    db.execute(statement)
                db.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (SCHEMA_HEAD,))
            except BaseException:
                db.execute("ROLLBACK")  # an empty file: the agent creates the schema
                raise
            db.execute("COMMIT")
        finally:
            db.close()

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
        return stored_moment(value)
    return value
