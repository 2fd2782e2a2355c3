"""The session id, fake clients and a settle step the room tests share."""

import asyncio

from tests.fakes.clients import FakeClient

SID = "s1"


async def settle() -> None:
    """Let every task that can run now run (a deadline's close, say)."""
    for _ in range(10):
        await asyncio.sleep(0)


def clients(*names: str) -> list[FakeClient]:
    return [FakeClient(name) for name in names]
