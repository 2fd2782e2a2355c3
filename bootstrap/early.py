"""Requests answered while the agent still loads (its imports take a few hundred ms after
`initialize`): `session/list` reads the store with the standard library (SQLite) or asyncpg
alone (PostgreSQL). Everything is imported on first use, so none of it delays `initialize`."""

import sqlite3
from typing import TYPE_CHECKING, Any

from adapters.protocol.lazy import EarlyAnswer

if TYPE_CHECKING:  # loaded with the store's readers, not before `initialize`
    from application.ports.session_store import SessionListing


def early_answers(database_url: str) -> dict[str, EarlyAnswer]:
    async def session_list(params: dict[str, Any] | None) -> Any | None:
        return await _list_early(database_url, params)

    # `sessions/list` is the agent's alias of `session/list` (adapters/protocol/agent.py).
    return {"session/list": session_list, "sessions/list": session_list}


def early_pages(database_url: str) -> "SessionListing | None":
    """The early reader for the store at `database_url`; None where only the agent reads."""
    from adapters.persistence.early_reads import EarlySessionPages, database_file

    database = database_file(database_url)
    if database is not None:
        return EarlySessionPages(database)
    if database_url.startswith("postgresql"):
        from adapters.persistence.early_postgres import EarlyPostgresPages, postgres_dsn

        dsn = postgres_dsn(database_url)
        return None if dsn is None else EarlyPostgresPages(dsn)
    return None


async def _list_early(database_url: str, params: dict[str, Any] | None) -> Any | None:
    from adapters.persistence.early_reads import NotReadableEarly
    from adapters.protocol.listing import plain_list_params, plain_list_result
    from application.errors import ApplicationError
    from application.use_cases.listing import read_page

    request = plain_list_params(params)
    pages = early_pages(database_url)
    if request is None or pages is None:
        return None
    try:
        page = await read_page(pages, *request)
    except (NotReadableEarly, ApplicationError, sqlite3.Error, ValueError):
        return None  # the agent answers, and says what is wrong if anything is
    return plain_list_result(page)
