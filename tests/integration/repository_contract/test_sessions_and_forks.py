"""One contract, three implementations (SQLite, PostgreSQL, the in-memory fake): sessions, their
forks and sub-agents, stored, loaded, rewritten and deleted alike."""

import pytest

from domain.content import TextBlock
from domain.ids import SessionId, ToolCallId
from domain.permission import Decider, PermissionDecision, PermissionOption
from domain.spawn import Spawn
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolKind
from tests.factories import T0, MessageFactory, SessionFactory
from tests.integration.repository_contract.support import (
    UowFactory,
    _call,
    append,
    fork_of,
    load,
    store,
    texts,
)

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]


async def test_round_trip_and_append(uow: UowFactory) -> None:
    session = await store(uow, SessionFactory())
    await append(uow, session, "one")
    await append(uow, session, "two")
    loaded = await load(uow, session.id)
    assert texts(loaded) == ["one", "two"]
    assert loaded.title == "one"  # type: ignore[union-attr]
    assert loaded.updated_at == session.updated_at  # type: ignore[union-attr]


async def test_forks_are_independent_both_ways(uow: UowFactory) -> None:
    source = await store(uow, SessionFactory())
    for text in ("a", "b", "c"):
        await append(uow, source, text)
    fork = await fork_of(uow, source)
    await append(uow, fork, "fork-only")
    await append(uow, source, "source-only")
    assert texts(await load(uow, fork.id)) == ["a", "b", "c", "fork-only"]
    assert texts(await load(uow, source.id)) == ["a", "b", "c", "source-only"]
    grandchild = await fork_of(uow, fork)
    await append(uow, grandchild, "deep")
    assert texts(await load(uow, grandchild.id)) == ["a", "b", "c", "fork-only", "deep"]


async def test_fork_copies_the_sessions_always_reject_answers(uow: UowFactory) -> None:
    source = await store(uow, SessionFactory())
    async with uow() as u:
        for tool, option in (
            ("bash", PermissionOption.REJECT_ALWAYS),
            ("write_file", PermissionOption.REJECT_ONCE),
            ("edit_file", PermissionOption.ALLOW_ALWAYS),  # kept per project, not here
        ):
            await u.activity.record_permission(
                source.id,
                PermissionDecision(
                    tool_call_id=ToolCallId("t"),
                    tool_name=tool,
                    arguments={},
                    option=option,
                    decided_by=Decider.USER,
                    decided_at=T0,
                ),
            )
        await u.commit()
    fork = await fork_of(uow, source)
    assert (await load(uow, fork.id)).permissions.rejected == {"bash"}  # type: ignore[union-attr]


async def test_tool_calls_of_the_shared_history_are_visible_to_the_fork(uow: UowFactory) -> None:
    source = await store(uow, SessionFactory())
    record = ToolCallRecord(
        id=ToolCallId("toolu_9"),
        name="bash",
        title="Run `ls`",
        kind=ToolKind.EXECUTE,
        arguments={"command": "ls"},
        status=ToolCallStatus.COMPLETED,
        output=(TextOutput(text="a b"),),
    )
    async with uow() as u:
        await u.activity.record_tool_call(source.id, record)
        await u.activity.record_tool_call(source.id, record)  # idempotent upsert
        await u.commit()
    fork = await fork_of(uow, source)
    async with uow() as u:
        assert (await u.activity.tool_calls(fork.id))["toolu_9"] == record


async def test_a_load_reads_the_history_and_every_ancestors_tool_calls_in_one_unit(
    uow: UowFactory,
) -> None:
    # A load reads the session, then its tool calls, in one unit of work: the line of
    # ancestors read for the first serves the second, for a fork of a fork too.
    source = await store(uow, SessionFactory())
    await append(uow, source, "a")
    async with uow() as u:
        await u.activity.record_tool_call(source.id, _call("toolu_1", "source's"))
        await u.activity.record_tool_call(source.id, _call("toolu_2", "source's"))
        await u.commit()
    fork = await fork_of(uow, source)
    async with uow() as u:
        await u.activity.record_tool_call(fork.id, _call("toolu_3", "fork's"))
        await u.commit()
    grandchild = await fork_of(uow, fork)
    async with uow() as u:
        await u.activity.record_tool_call(grandchild.id, _call("toolu_2", "its own"))
        await u.commit()
    for session_id in (grandchild.id, fork.id, source.id):
        async with uow() as u:
            loaded = await u.sessions.get(session_id)
            records = await u.activity.tool_calls(session_id)
            other = await u.activity.tool_calls(source.id)  # another session, same unit
        assert loaded is not None and texts(loaded) == ["a"]
        assert set(other) == {"toolu_1", "toolu_2"} and other["toolu_2"].title == "source's"
        titles = {call_id: r.title for call_id, r in records.items()}
        expected = {
            grandchild.id: {"toolu_1": "source's", "toolu_2": "its own", "toolu_3": "fork's"},
            fork.id: {"toolu_1": "source's", "toolu_2": "source's", "toolu_3": "fork's"},
            source.id: {"toolu_1": "source's", "toolu_2": "source's"},
        }[session_id]
        assert titles == expected


async def test_rewrite_history_touches_only_the_session_rewritten(uow: UowFactory) -> None:
    source = await store(uow, SessionFactory())
    for text in ("a", "b", "c"):
        await append(uow, source, text)
    fork = await fork_of(uow, source)
    await append(uow, fork, "d")
    # the fork's repair reaches into the shared part
    repaired = fork.with_history(
        [
            *fork.messages[:1],
            MessageFactory(content=(TextBlock(text="B"),)),
            *fork.messages[2:],
        ]
    )
    async with uow() as u:
        await u.sessions.rewrite_history(repaired, 1)
        await u.commit()
    assert texts(await load(uow, fork.id)) == ["a", "B", "c", "d"]
    assert texts(await load(uow, source.id)) == ["a", "b", "c"]
    # and the source's repair does not leak into the fork either
    fixed_source = source.with_history(
        [MessageFactory(content=(TextBlock(text="A"),)), *source.messages[1:]]
    )
    async with uow() as u:
        await u.sessions.rewrite_history(fixed_source, 0)
        await u.commit()
    assert texts(await load(uow, source.id)) == ["A", "b", "c"]
    assert texts(await load(uow, fork.id)) == ["a", "B", "c", "d"]


async def test_deleting_a_parent_keeps_its_forks_whole(uow: UowFactory) -> None:
    source = await store(uow, SessionFactory())
    await append(uow, source, "shared")
    fork = await fork_of(uow, source)
    async with uow() as u:
        assert await u.sessions.delete(source.id, T0)
        await u.commit()
    assert await load(uow, source.id) is None
    assert texts(await load(uow, fork.id)) == ["shared"]
    async with uow() as u:
        assert not await u.sessions.delete(source.id, T0)  # already gone
        assert await u.sessions.delete(fork.id, T0)
        assert not await u.sessions.delete(SessionId("never"), T0)
        await u.commit()
    async with uow() as u:
        assert await u.listing.list_page(cwd=None, after=None, limit=10) == []


async def test_a_fork_at_an_earlier_message_holds_the_history_before_it(uow: UowFactory) -> None:
    source = await store(uow, SessionFactory())
    for text in ("a", "b", "c"):
        await append(uow, source, text)
    fork = SessionFactory(cwd=source.cwd, messages=list(source.messages[:1]))
    async with uow() as u:
        await u.sessions.fork(source, fork)
        await u.commit()
    await append(uow, fork, "fork-only")
    await append(uow, source, "source-only")
    assert texts(await load(uow, fork.id)) == ["a", "fork-only"]
    assert texts(await load(uow, source.id)) == ["a", "b", "c", "source-only"]


async def test_a_subagents_session_is_listed_only_under_its_parent_and_deleted_with_it(
    uow: UowFactory,
) -> None:
    parent = await store(uow, SessionFactory())
    spawn = Spawn(parent_id=parent.id, tool_call_id=ToolCallId("toolu_a"), agent="researcher")
    child = await store(uow, SessionFactory(cwd=parent.cwd, spawn=spawn))
    await append(uow, child, "the task")
    loaded = await load(uow, child.id)
    assert loaded is not None and loaded.spawn == spawn and texts(loaded) == ["the task"]
    async with uow() as u:
        top = await u.listing.list_page(cwd=parent.cwd, after=None, limit=10)
        under = await u.listing.list_page(cwd=parent.cwd, after=None, limit=10, parent=parent.id)
    assert [s.session_id for s in top] == [parent.id]
    assert [(s.session_id, s.spawn) for s in under] == [(child.id, spawn)]
    async with uow() as u:
        assert await u.sessions.delete(parent.id, T0)
        await u.commit()
    assert await load(uow, child.id) is None
