"""Requests answered while the agent still loads (its imports take a few hundred ms after
`initialize`): `session/list` reads the store with the standard library. Everything is
imported on first use, so none of it delays `initialize`."""

import sqlite3
from typing import Any

from adapters.protocol.lazy import EarlyAnswer


def early_answers(database_url: str) -> dict[str, EarlyAnswer]:
    async def session_list(params: dict[str, Any] | None) -> Any | None:
        return await _list_early(database_url, params)

    # `sessions/list` is the agent's alias of `session/list` (adapters/protocol/agent.py).
    return {"session/list": session_list, "sessions/list": session_list}


async def _list_early(database_url: str, params: dict[str, Any] | None) -> Any | None:
    from adapters.persistence.early_reads import EarlySessionPages, NotReadableEarly, database_file
    from adapters.protocol.listing import plain_list_params, plain_list_result
    from application.errors import ApplicationError
    from application.use_cases.listing import read_page

    request = plain_list_params(params)
    database = database_file(database_url)
    if request is None or database is None:
        return None
    try:
        page = await read_page(EarlySessionPages(database), *request)
    except (NotReadableEarly, ApplicationError, sqlite3.Error, ValueError):
        return None  # the agent answers, and says what is wrong if anything is
    return plain_list_result(page)
