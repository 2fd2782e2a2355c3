"""Database failures as the application sees them: a StorageError saying why (and the
cause in the log: the client is told only the reason)."""

import logging

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from application.errors import StorageError

log = logging.getLogger(__name__)

# PostgreSQL's "try again" states: serialization failure, deadlock, lock not available.
_RETRYABLE_STATES = frozenset({"40001", "40P01", "55P03"})
# SQLite's: another writer held the lock past busy_timeout.
_SQLITE_BUSY = ("database is locked", "database table is locked")

UNREACHABLE = "the database is unreachable"
REFUSED = "the database refused the operation"


def is_database_failure(exc: BaseException | None) -> bool:
    # OSError: a connection refused or reset before SQLAlchemy wraps anything.
    return isinstance(exc, SQLAlchemyError | OSError)


def is_contention(exc: BaseException) -> bool:
    """The database was busy with other writers: the same work may well succeed when tried
    again, unlike on a database that refused it or cannot be reached."""
    original = exc.orig if isinstance(exc, DBAPIError) else exc
    if getattr(original, "sqlstate", None) in _RETRYABLE_STATES:
        return True
    text = str(original).lower()
    return any(busy in text for busy in _SQLITE_BUSY)


class Contended(StorageError):
    """A StorageError that other writers caused (is_contention): worth trying again."""


def storage_error(exc: BaseException, message: str | None = None) -> StorageError:
    unreachable = isinstance(exc, OSError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    )
    kind = Contended if is_contention(exc) else StorageError
    error = kind(message, reason=UNREACHABLE if unreachable else REFUSED)
    # What the client is told says only the reason: the cause is for whoever runs it.
    log.warning("%s (%s: %s)", error, type(exc).__name__, _first_line(exc))
    return error


def _first_line(exc: BaseException) -> str:
    text = str(exc.orig if isinstance(exc, DBAPIError) else exc).strip()
    return text.splitlines()[0][:300] if text else ""
