import asyncio
from datetime import datetime

import pytest

from application.errors import InvalidCursor, SessionNotFound
from application.sessions.cursor import encode_cursor
from application.sessions.listing import ListSessions
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from application.sessions.rename import RenameSession
from application.sessions.resume import ResumeSession
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.errors import InvalidTitle
from domain.events import SessionTitleChanged
from domain.permission import PermissionOption
from tests.unit.application.test_tools import final, ok, uses
from tests.unit.application.world import CATALOG, World


def lister(world: World, page_size: int = 50) -> ListSessions:
    return ListSessions(uow=world.uow, page_size=page_size)


async def new(world: World, cwd: str = "/p") -> str:
    return (await world.new_session().execute(NewSessionRequest(cwd=cwd))).session_id


async def say(world: World, sid: str, text: str) -> None:
    world.llm.scripts.append(final(f"re: {text}"))
    await world.prompt().execute(PromptRequest(session_id=sid, content=(TextBlock(text=text),)))


async def test_list_pages_newest_first_and_filters_by_exact_cwd(world: World) -> None:
    ids = [await new(world, "/p") for _ in range(5)]
    await new(world, "/p/sub")
    first = await lister(world, page_size=2).execute("/p", None)
    assert [s.session_id for s in first.sessions] == ids[::-1][:2]
    assert first.next_cursor
    seen = [s.session_id for s in first.sessions]
    cursor = first.next_cursor
    while cursor:
        page = await lister(world, page_size=2).execute("/p", cursor)
        seen += [s.session_id for s in page.sessions]
        cursor = page.next_cursor
    assert seen == ids[::-1]
    everything = await lister(world).execute(None, None)
    assert len(everything.sessions) == 6
    assert everything.next_cursor is None


async def test_a_cursor_is_bound_to_its_filter(world: World) -> None:
    for _ in range(3):
        await new(world)
    page = await lister(world, page_size=1).execute("/p", None)
    with pytest.raises(InvalidCursor):
        await lister(world, page_size=1).execute("/other", page.next_cursor)
    with pytest.raises(InvalidCursor):
        await lister(world).execute("/p", "garbage!")


async def test_updated_at_moves_with_new_messages(world: World) -> None:
    older = await new(world)
    await new(world)
    await say(world, older, "bump")
    page = await lister(world).execute("/p", None)
    assert page.sessions[0].session_id == older
    assert page.sessions[0].title == "bump"


async def test_fork_is_independent_and_keeps_settings(world: World) -> None:
    world.tools.tools = {"bash": ok}
    world.asker.answers = [PermissionOption.REJECT_ALWAYS]
    source = await new(world)
    world.llm.scripts.append(uses(("bash", {"command": "ls"})))
    await say(world, source, "first")
    fork = await world.fork().execute(source, "/p")
    assert fork.session_id != source
    await say(world, fork.session_id, "only in fork")
    await say(world, source, "only in source")
    source_texts = [m.visible_text() for m in world.uow.sessions.messages[source]]
    fork_texts = [m.visible_text() for m in world.uow.sessions.messages[fork.session_id]]
    assert "only in fork" in fork_texts and "only in fork" not in source_texts
    assert "only in source" in source_texts and "only in source" not in fork_texts
    stored_fork = await world.uow.sessions.get(fork.session_id)  # type: ignore[arg-type]
    assert stored_fork.permissions.rejected == {"bash"}
    assert stored_fork.title == "first"


async def test_resume_reopens_without_replay(world: World) -> None:
    sid = await new(world)
    await say(world, sid, "hello")
    await world.close().execute(sid)
    events_before = len(world.sink.events)
    state = await ResumeSession(
        stored=world.stored(), catalog=CATALOG, open_with=world.open_with()
    ).execute(sid, "/p")
    assert state.session_id == sid
    assert len(world.sink.events) == events_before
    await say(world, sid, "again")


async def test_unknown_sessions(world: World) -> None:
    with pytest.raises(SessionNotFound):
        await ResumeSession(
            stored=world.stored(), catalog=CATALOG, open_with=world.open_with()
        ).execute("nope", "/p")
    with pytest.raises(SessionNotFound):
        await world.fork().execute("nope", "/p")
    sid = await new(world)
    with pytest.raises(SessionNotFound) as caught:
        await world.fork().execute(sid, "/elsewhere")
    assert caught.value.details["cwd"] == "/p"


async def test_delete_is_idempotent_and_closes_the_runtime(world: World) -> None:
    sid = await new(world)
    delete = world.delete()
    assert await delete.execute(sid)
    assert world.registry.find(sid) is None
    assert not await delete.execute(sid)
    assert not await delete.execute("never-existed")
    assert (await lister(world).execute(None, None)).sessions == []


async def test_a_session_without_turns_supports_everything(world: World) -> None:
    sid = await new(world)
    await world.close().execute(sid)
    assert (await lister(world).execute("/p", None)).sessions[0].session_id == sid
    await ResumeSession(
        stored=world.stored(), catalog=CATALOG, open_with=world.open_with()
    ).execute(sid, "/p")
    fork = await world.fork().execute(sid, "/p")
    assert world.uow.sessions.messages[fork.session_id] == []
    delete = world.delete()
    assert await delete.execute(sid)


def renamer(world: World) -> RenameSession:
    return RenameSession(
        uow=world.uow,
        stored=world.stored(),
        registry=world.registry,
        sink=world.sink,
        clock=world.clock,
    )


async def test_titles_can_be_replaced(world: World) -> None:
    sid = await new(world)
    await say(world, sid, "first prompt")
    assert await renamer(world).execute(sid, "  Better\nname ") == "Better"
    assert world.sink.of_type(SessionTitleChanged)[-1] == SessionTitleChanged(title="Better")
    assert (await lister(world).execute("/p", None)).sessions[0].title == "Better"
    await world.close().execute(sid)
    await renamer(world).execute(sid, "Stored only")
    assert (await world.uow.sessions.get(sid)).title == "Stored only"  # type: ignore[arg-type,union-attr]
    with pytest.raises(InvalidTitle):
        await renamer(world).execute(sid, "   ")
    with pytest.raises(SessionNotFound):
        await renamer(world).execute("nope", "x")


async def test_a_session_running_a_prompt_loads_its_completed_history(world: World) -> None:
    """Another client may attach mid-turn: it gets the history completed so far (the
    prompt being answered), not the reply still being written."""

    async def hang(_):  # type: ignore[no-untyped-def]
        await asyncio.Event().wait()
        yield

    sid = await new(world)
    world.llm.scripts.append(hang)
    running = asyncio.create_task(
        world.prompt().execute(PromptRequest(session_id=sid, content=(TextBlock(text="x"),)))
    )
    await world.llm.started.wait()
    loaded = await world.load().prepare(LoadSessionRequest(session_id=sid, cwd="/p"))
    assert loaded.state.session_id == sid
    assert [type(e).__name__ for e in loaded.replay] == ["UserContentReplayed"]
    world.cancel().execute(sid)
    await running
    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/p"))


async def test_a_cursor_with_a_moment_without_its_zone_is_invalid(world: World) -> None:
    # Not one this server gives (it writes UTC with its offset); the store refuses naive
    # moments, which made such a cursor an internal storage error instead.
    await new(world)
    forged = encode_cursor("/p", datetime(2026, 1, 1), "sess_x")
    with pytest.raises(InvalidCursor):
        await lister(world).execute("/p", forged)
