"""Exit 0 when the PostgreSQL server at the URL given answers a query, else 1 with the reason."""

import asyncio
import sys
from urllib.parse import urlsplit, urlunsplit

import asyncpg


async def answers(url: str) -> None:
    dsn = urlunsplit(urlsplit(url)._replace(scheme="postgresql"))
    connection = await asyncpg.connect(dsn, timeout=10)
    try:
        await connection.fetchval("SELECT 1")
    finally:
        await connection.close()


def main(url: str) -> int:
    try:
        asyncio.run(answers(url))
    except (OSError, asyncpg.PostgresError) as exc:
        print(f"ci: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
