"""Is the database reachable and at the newest schema? Asked by /readyz, on every probe, over
a connection of its own: it answers for the database, not for the server's pool. Cheap to
import (no SQLAlchemy): the probe exists before the agent has loaded."""

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from adapters.persistence.schema_head import REVISION_QUERY, is_head

WAIT_SECONDS = 2.0  # for the connection and the query: /readyz has its own deadline too


async def at_schema_head(database_url: str) -> bool:
    """True when the database answers and holds the newest schema; False when it holds
    another; raises when it cannot be reached or read (the probe answers 503 either way)."""
    scheme = database_url.split(":", 1)[0]
    if scheme.startswith("postgresql"):
        return await _postgres(database_url)
    return await asyncio.to_thread(_sqlite, database_url)


def _sqlite(database_url: str) -> bool:
    from sqlalchemy.engine import make_url  # loaded by then: the probe waits for the agent

    path = Path(make_url(database_url).database or "").expanduser().absolute()
    uri = f"{path.as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=WAIT_SECONDS)) as db:
        return is_head(db.execute(REVISION_QUERY))


async def _postgres(database_url: str) -> bool:
    import asyncpg

    parts = urlsplit(database_url)
    dsn = urlunsplit(parts._replace(scheme="postgresql"))
    connection = await asyncpg.connect(dsn, timeout=WAIT_SECONDS)
    try:
        rows = await connection.fetch(REVISION_QUERY, timeout=WAIT_SECONDS)
    finally:
        await connection.close(timeout=WAIT_SECONDS)
    return is_head(rows)
