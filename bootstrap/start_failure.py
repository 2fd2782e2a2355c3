"""Why the agent could not start, as the client is told: a database that cannot be reached
or refuses the migration is the session store's failure (a StorageError, answered like any
other storage error: -32603 with `data.reason`, never the driver's text, which may name the
user), not an internal error."""

STORE_NOT_OPENED = (
    "The session store could not be opened; the agent tries again at the next request."
)


def start_failure(exc: BaseException) -> BaseException:
    """`exc`, or the StorageError it stands for when a database failure caused it."""
    from adapters.persistence.failures import is_database_failure, storage_error

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if is_database_failure(cause):
            return storage_error(cause, STORE_NOT_OPENED)
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return exc
