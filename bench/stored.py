"""Stored sessions for the benchmarks, written straight into a migrated database with the
persistence mappers (much faster than creating them through the server)."""

import asyncio
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url

from adapters.persistence import tables
from adapters.persistence.engine import make_engine
from adapters.persistence.mappers import message_to_row, session_to_row, tool_call_to_row
from adapters.persistence.migrate import upgrade_to_head
from domain.choices import Choices
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId, SessionId, ToolCallId
from domain.message import Message, Role
from domain.session import Session
from domain.timestamps import Timestamps
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolKind
from domain.workspace import Workspace

T0 = datetime(2026, 1, 1, tzinfo=UTC)

Stored = tuple[Session, Sequence[ToolCallRecord]]


def history(
    turns: int, *, prefix: str = "", tool_every: int = 1
) -> tuple[list[Message], list[ToolCallRecord]]:
    """`turns` question-and-answer turns; every `tool_every`-th reads a file through a tool
    call in between (its result in the history, its record as shown to the client). Ids
    start with `prefix`, so several such histories can share a database."""
    messages: list[Message] = []
    records: list[ToolCallRecord] = []

    def add(role: Role, *blocks: object) -> None:
        messages.append(
            Message(
                id=MessageId(f"{prefix}m{len(messages)}"),
                role=role,
                content=tuple(blocks),  # type: ignore[arg-type]
                created_at=T0 + timedelta(seconds=len(messages)),
            )
        )

    for r in range(turns):
        add(Role.USER, TextBlock(text=f"Question {r}: what does module {r} do?"))
        if r % tool_every == tool_every - 1:
            use_id, arguments = f"toolu_{prefix}{r}", {"path": f"m{r}.py"}
            add(
                Role.ASSISTANT,
                TextBlock(text=f"Let me read module {r}."),
                ToolUseBlock(id=use_id, name="read_file", input=arguments),
            )
            add(Role.USER, ToolResultBlock(tool_use_id=use_id, content="x = 1\n" * 20))
            records.append(
                ToolCallRecord(
                    id=ToolCallId(use_id),
                    name="read_file",
                    title=f"Read m{r}.py",
                    kind=ToolKind.READ,
                    arguments=arguments,
                    status=ToolCallStatus.COMPLETED,
                    output=(TextOutput(text="x = 1\n" * 20),),
                )
            )
        add(Role.ASSISTANT, TextBlock(text=f"Module {r} sets x to 1. " * 5))
    return messages, records


def demo_session(
    session_id: str,
    cwd: str,
    title: str | None,
    messages: Sequence[Message] = (),
    updated_at: datetime = T0,
) -> Session:
    """A session on the demo model, made at T0, as a store would hold it."""
    return Session.as_stored(
        id=SessionId(session_id),
        workspace=Workspace(cwd=cwd),
        choices=Choices(model="demo"),
        title=title,
        timestamps=Timestamps(created_at=T0, updated_at=updated_at),
        history=messages,
        version=0,
    )


def one_message(session_id: str, cwd: str, n: int, title: str | None = None) -> Session:
    """A session holding one user message, updated `n` seconds after T0."""
    stamp = T0 + timedelta(seconds=n)
    session = demo_session(session_id, cwd, title, updated_at=stamp)
    session.add_message(
        Message(
            id=MessageId(f"m_{n}"),
            role=Role.USER,
            content=(TextBlock(text=f"hello {n}"),),
            created_at=stamp,
        )
    )
    return session


def store(url: str, sessions: Iterable[Stored]) -> None:
    """Migrate the database at `url` and write the sessions, their messages and tool calls."""
    upgrade_to_head(url)
    session_rows: list[dict[str, Any]] = []
    message_rows: list[dict[str, Any]] = []
    call_rows: list[dict[str, Any]] = []
    for session, records in sessions:
        session_rows.append(session_to_row(session))
        message_rows.extend(
            message_to_row(session.id, i, m) for i, m in enumerate(session.messages)
        )
        call_rows.extend(tool_call_to_row(session.id, record) for record in records)
    if make_url(url).get_backend_name() == "postgresql":
        asyncio.run(_store_postgres(url, session_rows, message_rows, call_rows))
        return
    engine = create_engine(url.replace("+aiosqlite", ""))
    with engine.begin() as db:
        db.execute(insert(tables.sessions), session_rows)
        db.execute(insert(tables.messages), message_rows)
        if call_rows:
            db.execute(insert(tables.tool_calls), call_rows)
    engine.dispose()


async def _store_postgres(url: str, *rows: list[dict[str, Any]]) -> None:
    """The same rows through the server's own engine (its codecs), in batches; then ANALYZE,
    as autovacuum would soon after such a load, so the planner knows the tables' sizes."""
    engine = make_engine(url)
    try:
        async with engine.begin() as db:
            for table, table_rows in zip(
                (tables.sessions, tables.messages, tables.tool_calls), rows, strict=True
            ):
                for start in range(0, len(table_rows), 5000):
                    await db.execute(insert(table), table_rows[start : start + 5000])
        async with engine.begin() as db:
            await db.execute(text("ANALYZE"))
    finally:
        await engine.dispose()
