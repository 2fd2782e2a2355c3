"""Contexts, calls and big files the tools' hardening tests share."""

import asyncio
from pathlib import Path

from adapters.tools.runner import LocalToolRunner
from application.ports.tools import ToolContext, ToolResult

ROOT = Path(__file__).resolve().parents[3]


def ctx(project: Path, session: str = "s1") -> ToolContext:
    return ToolContext(cwd=str(project), model="m", session_id=session)


async def nothing(chunk: str) -> None:
    pass


async def poll(condition, bound: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    """Wait until condition() holds, up to a generous bound; False if it never did."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def call(
    runner: LocalToolRunner, project: Path, name: str, **arguments: object
) -> ToolResult:
    plan = await runner.plan(name, arguments, ctx(project))
    assert plan.problem is None, plan.problem
    return await runner.run(name, arguments, ctx(project), nothing)


def _big_sparse_file(path: Path, size: int = 300 * 2**20) -> None:
    """Text lines at the start (more than the binary sniff looks at), then a hole: 300 MiB
    long, a few KiB on disk."""
    with path.open("wb") as file:
        file.write(b"".join(b"line %d\n" % n for n in range(1, 2001)))
        file.truncate(size)
