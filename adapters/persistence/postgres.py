"""The one place that knows how we talk to PostgreSQL (through asyncpg)."""

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from adapters.persistence.json_columns import dump_repaired_json, load_json
from adapters.persistence.postgres_text import decode_text, encode_text

DRIVER = "postgresql+asyncpg"
# Text is stored as adapters/persistence/postgres_text.py says, on every connection.
_TEXT_TYPES = ("text", "varchar")


def asyncpg_url(url: str) -> URL:
    """`postgresql://` or `postgresql+asyncpg://` as the asyncpg driver's URL."""
    parsed = make_url(url)
    if parsed.drivername not in ("postgresql", DRIVER):
        raise ValueError(
            f"PostgreSQL is reached through asyncpg ({DRIVER}://), not {parsed.drivername}"
        )
    return parsed.set(drivername=DRIVER)


async def _text_codecs(connection: Any) -> None:
    for name in _TEXT_TYPES:
        await connection.set_type_codec(
            name, schema="pg_catalog", encoder=encode_text, decoder=decode_text, format="text"
        )


def _on_connect(dbapi_connection: Any, _record: object) -> None:
    dbapi_connection.run_async(_text_codecs)


def make_postgres_engine(url: str) -> AsyncEngine:
    engine = create_async_engine(
        asyncpg_url(url),
        # A replica outlives database restarts: a pooled connection the server dropped is
        # replaced before use instead of failing the request that draws it.
        pool_pre_ping=True,
        json_serializer=dump_repaired_json,
        json_deserializer=load_json,
    )
    event.listen(engine.sync_engine, "connect", _on_connect)
    return engine
