"""Database failures as the application sees them: a StorageError saying why."""

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from application.errors import StorageError

UNREACHABLE = "the database is unreachable"
REFUSED = "the database refused the operation"


def is_database_failure(exc: BaseException | None) -> bool:
    # OSError: a connection refused or reset before SQLAlchemy wraps anything.
    return isinstance(exc, SQLAlchemyError | OSError)


def storage_error(exc: BaseException, message: str | None = None) -> StorageError:
    unreachable = isinstance(exc, OSError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    )
    return StorageError(message, reason=UNREACHABLE if unreachable else REFUSED)
