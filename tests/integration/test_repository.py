import asyncio
import sqlite3
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from domain.content import (
    AudioBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    RedactedThinkingBlock,
    ResourceLinkBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.message import Compaction, MessageKind, Role
from domain.stop_reason import StopReason
from domain.turn import Turn
from domain.usage import Usage
from tests.factories import T0, MessageFactory, SessionFactory

pytestmark = pytest.mark.integration


async def test_a_session_round_trips_with_every_block_kind(uow_factory) -> None:  # type: ignore[no-untyped-def]
    session = SessionFactory(title="Title", config={"k": "v"})
    blocks = (
        TextBlock(text="héllo ✓"),
        ImageBlock(mime_type="image/png", uri="file:///i.png"),
        AudioBlock(mime_type="audio/wav"),
        ResourceLinkBlock(uri="file:///a", name="a", title="A"),
        EmbeddedResourceBlock(uri="file:///b", text="b"),
        EmbeddedResourceBlock(uri="file:///c", mime_type="image/png", is_binary=True),
    )
    reply = (
        ThinkingBlock(thinking="t", signature="sig"),
        RedactedThinkingBlock(data="xx"),
        TextBlock(text="ok"),
        ToolUseBlock(id="toolu_1", name="grep", input={"p": [1]}),
    )
    session.add_message(MessageFactory(content=blocks))
    session.add_message(MessageFactory(role=Role.ASSISTANT, content=reply, interrupted=True))
    session.add_message(
        MessageFactory(
            content=(ToolResultBlock(tool_use_id="toolu_1", content="r", is_error=True),)
        )
    )
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()

    async with uow_factory() as uow:
        loaded = await uow.sessions.get(session.id)
    assert loaded is not None
    assert loaded.messages == session.messages
    assert (loaded.cwd, loaded.title, loaded.model, loaded.config) == (
        session.cwd,
        "Title",
        session.model,
        {"k": "v"},
    )
    assert loaded.created_at == session.created_at and loaded.created_at.tzinfo is not None


async def test_a_compaction_marker_keeps_its_counts_and_window(uow_factory) -> None:  # type: ignore[no-untyped-def]
    # The window a compaction was counted against is replayed beside its counts; a marker
    # stored before it was kept comes back without one.
    session = SessionFactory()
    first = MessageFactory(content=(TextBlock(text="hi"),))
    facts = Compaction(keep_from=first.id, tokens_before=9_000, tokens_after=800, window=10_000)
    old = replace(facts, window=None, focus="tests")
    for count, compaction in enumerate((facts, old)):
        session.add_message(first if count == 0 else MessageFactory())
        marker = MessageFactory(
            role=Role.ASSISTANT,
            kind=MessageKind.COMPACTION,
            content=(TextBlock(text="summary"),),
            compaction=compaction,
        )
        session.add_message(marker)
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()

    async with uow_factory() as uow:
        loaded = await uow.sessions.get(session.id)
    assert loaded is not None
    assert [m.compaction for m in loaded.messages if m.compaction] == [facts, old]


async def test_appended_messages_are_stored_in_order(uow_factory) -> None:  # type: ignore[no-untyped-def]
    session = SessionFactory()
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()
    for i in range(5):
        message = MessageFactory(
            created_at=T0 + timedelta(minutes=i), content=(TextBlock(text=f"m{i}"),)
        )
        session.add_message(message)
        async with uow_factory() as uow:
            await uow.sessions.save(session)
            await uow.commit()
    async with uow_factory() as uow:
        loaded = await uow.sessions.get(session.id)
    assert [m.visible_text() for m in loaded.messages] == [f"m{i}" for i in range(5)]
    assert loaded.title == "m0"
    assert loaded.updated_at == T0 + timedelta(minutes=4)


async def test_uncommitted_work_is_rolled_back(uow_factory) -> None:  # type: ignore[no-untyped-def]
    session = SessionFactory()
    async with uow_factory() as uow:
        await uow.sessions.add(session)
    async with uow_factory() as uow:
        assert await uow.sessions.get(session.id) is None


async def test_settings_and_turns_are_saved(uow_factory, engine) -> None:  # type: ignore[no-untyped-def]
    session = SessionFactory()
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()
    session.choose_model("other", at=T0 + timedelta(days=1))
    turn = Turn(started_at=T0, max_requests=5)
    turn.record_request(Usage(input_tokens=7, output_tokens=3, cache_read_tokens=1))
    turn.finish(StopReason.END_TURN, at=T0)
    async with uow_factory() as uow:
        await uow.sessions.save(session)
        await uow.activity.record_turn(session.id, turn, None)
        await uow.commit()
    async with uow_factory() as uow:
        loaded = await uow.sessions.get(session.id)
    assert loaded.model == "other"
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT stop_reason, requests, input_tokens, cache_read_tokens FROM turns")
            )
        ).one()
    assert tuple(row) == ("end_turn", 1, 7, 1)


@pytest.mark.backends("sqlite")
async def test_wal_and_busy_timeout_are_on(engine) -> None:  # type: ignore[no-untyped-def]
    async with engine.connect() as conn:
        assert (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal"
        assert (await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar() >= 5000
        assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1


async def test_concurrent_writers_do_not_fail_with_database_locked(uow_factory) -> None:  # type: ignore[no-untyped-def]
    sessions = [SessionFactory() for _ in range(10)]

    async def write(session) -> None:  # type: ignore[no-untyped-def]
        async with uow_factory() as uow:
            await uow.sessions.add(session)
            await uow.commit()
        for i in range(5):
            message = MessageFactory(content=(TextBlock(text=str(i)),))
            session.add_message(message)
            async with uow_factory() as uow:
                await uow.sessions.save(session)
                await uow.commit()

    await asyncio.gather(*(write(s) for s in sessions))
    async with uow_factory() as uow:
        for session in sessions:
            assert (await uow.sessions.get(session.id)).message_count == 5


@pytest.mark.backends("sqlite")
async def test_a_committed_message_is_visible_to_another_process_at_once(
    uow_factory, database_url: str
) -> None:  # type: ignore[no-untyped-def]
    session = SessionFactory()
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()
    message = MessageFactory()
    session.add_message(message)
    async with uow_factory() as uow:
        await uow.sessions.save(session)
        await uow.commit()
    path = Path(database_url.split("///", 1)[1])
    with sqlite3.connect(path) as db:  # a separate connection, as after a crash
        assert db.execute("SELECT count(*) FROM messages").fetchone() == (1,)


async def test_finding_1_a_stored_lone_surrogate_is_repaired_as_it_is_read(uow_factory) -> None:  # type: ignore[no-untyped-def]
    # As a row written before text was repaired on entry: JSON keeps the surrogate escaped.
    session = SessionFactory(title="stored before the fix", config={"k": "v\ud800"})
    session.add_message(MessageFactory(content=(TextBlock(text="caf\ud800"),)))
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()

    async with uow_factory() as uow:
        loaded = await uow.sessions.get(session.id)
    assert loaded is not None
    assert loaded.messages[0].content == (TextBlock(text="caf\ufffd"),)
    assert loaded.config == {"k": "v\ufffd"}


@pytest.mark.backends("sqlite")
async def test_an_image_keeps_its_data_and_an_image_stored_without_data_still_loads(  # type: ignore[no-untyped-def]
    uow_factory, database_url
) -> None:
    image = ImageBlock(mime_type="image/png", data="iVBORw0KGgo=" * 1000, uri="file:///s.png")
    session = SessionFactory()
    session.add_message(MessageFactory(content=(TextBlock(text="see"), image)))
    session.add_message(MessageFactory(content=(TextBlock(text="old"),)))
    async with uow_factory() as uow:
        await uow.sessions.add(session)
        await uow.commit()
    # The second message as a row written before images kept their data.
    old_row = '[{"type": "image", "mime_type": "image/gif", "uri": "file:///o.gif"}]'
    with sqlite3.connect(Path(database_url.split("///", 1)[1])) as db:
        db.execute("UPDATE messages SET content = ? WHERE position = 1", (old_row,))

    async with uow_factory() as uow:
        loaded = await uow.sessions.get(session.id)
    assert loaded is not None
    assert loaded.messages[0].content == (TextBlock(text="see"), image)
    assert loaded.messages[1].content == (ImageBlock(mime_type="image/gif", uri="file:///o.gif"),)
