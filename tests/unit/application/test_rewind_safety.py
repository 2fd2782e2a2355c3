"""What a restoring rewind and its undo never do (write through a symlink, write outside the
session's directories, overwrite what the user changed since), what the permission request
names, and how the restore's permission decision is recorded: in-memory fakes."""

import asyncio

import pytest

from application.errors import RestoreDeclined, RestoreRefused, RewindConflict
from application.ports.checkpoints import ScannedChange
from application.rewind.rewind import OnConflict, RestoreFiles
from domain.checkpoints import NOT_A_FILE, Unrestorable
from domain.permission import Decider, PermissionOption
from domain.session import Session
from tests.factories import T0, MessageFactory
from tests.fakes.turn import ScriptedAsker
from tests.fakes.workspace_files import InMemoryWorkspaceFiles, ScriptedScanner
from tests.unit.application.test_file_checkpoints import (
    A,
    B,
    C,
    agent_turn,
    checkpoints,
    opened,
    rewind,
    three_turns,
)
from tests.unit.application.world import World

ALLOW, REJECT = PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE


async def test_a_symlink_where_the_agent_left_a_file_is_a_conflict_never_written_through(
    world: World,
) -> None:
    """Finding 1(a): the link reads as the agent left the file; it is a conflict all the
    same, and `force` does not write through it (nor over it)."""
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    files.links.add(A)
    with pytest.raises(RewindConflict) as refused:
        await rewind(world, files).execute(session.id, "u3", files=RestoreFiles())
    assert refused.value.details["conflicts"] == [A]
    forced = await rewind(world, files).execute(
        session.id, "u3", files=RestoreFiles(OnConflict.FORCE)
    )
    assert forced.files is not None
    assert forced.files.unrestorable == ((A, Unrestorable.NOT_A_FILE),)
    assert A not in files.writes and sorted(files.writes) == [B, C]


async def test_a_symlinked_directory_on_the_way_is_never_written_or_removed_through(
    world: World,
) -> None:
    """Finding 1(b)/(c): every path below a directory the user replaced by a link."""
    files = InMemoryWorkspaceFiles({"/p/d/e.txt": b"e0"})
    taken = checkpoints(world, files)
    session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    for path, content in (("/p/d/e.txt", b"e1"), ("/p/d/made.txt", b"made")):
        await taken.before(session, (path,))
        files.files[path] = content
        await taken.after(session, (path,))
    files.links.add("/p/d")
    forced = await rewind(world, files).execute(
        session.id, "u1", files=RestoreFiles(OnConflict.FORCE)
    )
    assert forced.files is not None and sorted(forced.files.unrestorable) == [
        ("/p/d/e.txt", Unrestorable.NOT_A_FILE),
        ("/p/d/made.txt", Unrestorable.NOT_A_FILE),
    ]
    assert files.writes == []


async def test_a_skipping_restore_leaves_a_symlink_as_a_skipped_conflict(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    files.links.add(C)
    skipped = await rewind(world, files).execute(
        session.id, "u3", files=RestoreFiles(OnConflict.SKIP)
    )
    assert skipped.files is not None and skipped.files.skipped == (C,)
    assert C not in files.writes


async def test_a_file_changed_outside_the_sessions_directories_is_never_restored(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({"/elsewhere/x.txt": b"x0"})
    taken = checkpoints(world, files)
    session = await opened(world)
    await agent_turn(session, taken, files, "u1", a=b"a1")
    await taken.before(session, ("/elsewhere/x.txt",))
    files.files["/elsewhere/x.txt"] = b"x1"
    rewound = await rewind(world, files).execute(session.id, "u1", files=RestoreFiles())
    assert rewound.files is not None
    assert rewound.files.unrestorable == (("/elsewhere/x.txt", Unrestorable.OUTSIDE),)
    assert files.files == {"/elsewhere/x.txt": b"x1"}  # a.txt (created) removed; x left


async def test_a_file_reached_through_a_symlink_is_not_checkpointed_as_restorable(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({A: b"a0"})
    files.links.add(A)
    taken = checkpoints(world, files)
    session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    await taken.before(session, (A,))
    (kept,) = await world.uow.checkpoints.checkpoints(session.id)
    assert (kept.prior, kept.unrestorable) == (NOT_A_FILE, Unrestorable.NOT_A_FILE)


async def test_an_undo_refuses_what_the_user_changed_after_the_rewind(world: World) -> None:
    """Finding 2: nothing is done (the history stays cut), the conflicts are answered."""
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    rewound = await rewind(world, files).execute(session.id, "u3", files=RestoreFiles())
    files.files[A] = b"the user's, after the rewind"
    with pytest.raises(RewindConflict) as refused:
        await rewind(world, files).undo(session.id, rewound.undo_token)
    assert refused.value.details["conflicts"] == [A]
    assert refused.value.details["resolve"] == ["force", "skip"]
    assert files.files == {A: b"the user's, after the rewind", B: b"b2"}
    assert [m.id for m in session.messages] == ["u1", "re-u1", "u2", "re-u2"]

    skipping = RestoreFiles(OnConflict.SKIP)
    undone = await rewind(world, files).undo_rewind(session.id, rewound.undo_token, files=skipping)
    assert undone.message_count == 6 and undone.files is not None
    assert undone.files.skipped == (A,) and sorted(undone.files.restored) == [B, C]
    assert files.files == {A: b"the user's, after the rewind", C: b"c3"}


async def test_a_forced_undo_overwrites_the_users_change_but_never_a_symlink(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    rewound = await rewind(world, files).execute(session.id, "u3", files=RestoreFiles())
    files.files[A] = b"the user's"
    files.links.add(C)  # where the undo would recreate c.txt
    forcing = RestoreFiles(OnConflict.FORCE)
    undone = await rewind(world, files).undo_rewind(session.id, rewound.undo_token, files=forcing)
    assert undone.files is not None
    assert undone.files.unrestorable == ((C, Unrestorable.NOT_A_FILE),)
    assert files.files == {A: b"a3"}  # b.txt removed again, as the agent had


async def test_a_file_the_user_changes_while_asked_is_left_and_reported_skipped(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    answered = asyncio.Event()

    class ChangingWhileAsked(ScriptedAsker):
        async def ask(self, session_id, request):  # type: ignore[no-untyped-def]
            files.files[A] = b"typed while the question was open"
            answered.set()
            return ALLOW

    rewound = await rewind(world, files, ChangingWhileAsked()).execute(
        session.id, "u3", files=RestoreFiles()
    )
    assert answered.is_set() and rewound.files is not None
    assert rewound.files.skipped == (A,) and sorted(rewound.files.restored) == [B, C]
    assert files.files[A] == b"typed while the question was open"


async def test_the_request_names_every_path_the_restore_touches_and_only_those(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    files.files[C] = b"c3"  # as the agent left it
    files.files[A] = b"a2"  # already as it was before u3: kept, not written
    files.links.add(C)
    asker = ScriptedAsker(ALLOW)
    rewound = await rewind(world, files, asker).execute(
        session.id, "u3", files=RestoreFiles(OnConflict.SKIP)
    )
    (request,) = asker.requests
    assert request.locations == (B,) and request.arguments == {"paths": [B]}
    assert files.writes == [B]
    assert rewound.files is not None and sorted(rewound.files.restored) == [A, B]


async def test_undo_asks_in_the_default_mode_and_plan_mode_refuses_it(world: World) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    rewound = await rewind(world, files).execute(session.id, "u3", files=RestoreFiles())
    restored = dict(files.files)
    session.set_mode("plan", at=T0)
    with pytest.raises(RestoreRefused):
        await rewind(world, files).undo(session.id, rewound.undo_token)
    session.set_mode("default", at=T0)
    asker = ScriptedAsker(REJECT, ALLOW)
    with pytest.raises(RestoreDeclined):
        await rewind(world, files, asker).undo(session.id, rewound.undo_token)
    assert files.files == restored and len(session.messages) == 4
    assert await rewind(world, files, asker).undo(session.id, rewound.undo_token) == 6
    assert [r.tool_call_id for r in asker.requests] == [f"rewind_undo_{rewound.undo_token}"] * 2
    assert asker.requests[0].title == "Put back 3 file(s) as they were before the rewind"
    assert files.files == {A: b"a3", C: b"c3"}


async def test_each_restore_decision_is_recorded_as_a_tool_calls_is(world: World) -> None:
    """The one permission rule decides, the activity log keeps each decision (and who took
    it), as PermissionDesk records a tool call's."""
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    rewound = await rewind(world, files, ScriptedAsker(ALLOW)).execute(
        session.id, "u3", files=RestoreFiles()
    )
    session.set_mode("plan", at=T0)
    with pytest.raises(RestoreRefused):
        await rewind(world, files).undo(session.id, rewound.undo_token)
    session.set_mode("accept_edits", at=T0)
    await rewind(world, files).undo(session.id, rewound.undo_token)
    session.set_mode("default", at=T0)
    with pytest.raises(RestoreDeclined):
        await rewind(world, files, ScriptedAsker(TimeoutError())).execute(
            session.id, "u2", files=RestoreFiles()
        )

    decisions = world.uow.sessions.decisions[session.id]
    assert [(d.tool_name, d.option, d.decided_by) for d in decisions] == [
        ("rewind_restore_files", ALLOW, Decider.USER),
        ("rewind_restore_files", REJECT, Decider.MODE),  # plan mode: refused
        ("rewind_restore_files", ALLOW, Decider.MODE),  # accept_edits: not asked
        ("rewind_restore_files", None, Decider.TIMEOUT),
    ]
    token = rewound.undo_token
    assert [d.tool_call_id for d in decisions[:3]] == [
        f"rewind_restore_{token}",
        f"rewind_undo_{token}",
        f"rewind_undo_{token}",
    ]
    assert sorted(decisions[0].arguments["paths"]) == [A, B, C]  # type: ignore[call-overload]
    times = [d.decided_at for d in decisions]  # the clock's, one tick each
    assert times == sorted(set(times))


async def test_a_commands_unknown_prior_keeps_the_scanners_reason(world: World) -> None:
    files = InMemoryWorkspaceFiles({A: b"a0"})
    scanner = ScriptedScanner()
    taken = checkpoints(world, files, scanner=scanner)
    session: Session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    scanner.next = (ScannedChange(path=A, existed=True, unknown=Unrestorable.TOO_LARGE),)
    watch = await taken.before_command(session)
    await taken.after_command(session, watch)
    (kept,) = await world.uow.checkpoints.checkpoints(session.id)
    assert kept.unrestorable is Unrestorable.TOO_LARGE
