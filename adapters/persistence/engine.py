"""The engine for a database URL: SQLite (the embedded default) or PostgreSQL."""

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

_PG = "postgresql+asyncpg"


def backend(url: str) -> str:
    """'sqlite' or 'postgresql'; anything else is refused with the reason."""
    name = make_url(url).get_backend_name()
    if name not in ("sqlite", "postgresql"):
        raise ValueError(f"unsupported database {name!r}: use sqlite+aiosqlite:// or {_PG}://")
    return name


def make_engine(url: str) -> AsyncEngine:
    if backend(url) == "postgresql":
        from adapters.persistence.postgres import make_postgres_engine

        return make_postgres_engine(url)
    from adapters.persistence.sqlite import make_sqlite_engine

    return make_sqlite_engine(url)
