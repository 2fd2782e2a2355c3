"""File checkpoints (taken as the agent changes files) and a rewind that restores files,
with in-memory fakes: the store, the files on disk, the clients."""

import pytest

from application.checkpoints.file_checkpoints import FileCheckpoints
from application.checkpoints.restoring import FileRestorer
from application.errors import RestoreDeclined, RestoreRefused, RewindConflict
from application.notices.session_notices import SessionNotices
from application.ports.checkpoints import ScannedChange
from application.rewind.restore_permission import RestorePermission
from application.rewind.rewind import OnConflict, RestoreFiles, RewindSession
from domain.checkpoints import Unrestorable, state_of
from domain.events import SessionNotice
from domain.permission import PermissionOption
from domain.session import Session
from domain.tool_call import DiffOutput
from tests.factories import T0, MessageFactory, SessionFactory
from tests.fakes.turn import ScriptedAsker
from tests.fakes.workspace_files import InMemoryWorkspaceFiles, ScriptedScanner
from tests.unit.application.world import World

A, B, C = "/p/a.txt", "/p/b.txt", "/p/c.txt"


def checkpoints(
    world: World,
    files: InMemoryWorkspaceFiles,
    max_bytes: int = 10_000,
    scanner: ScriptedScanner | None = None,
) -> FileCheckpoints:
    notices = SessionNotices(sink=world.sink, ids=world.ids)
    return FileCheckpoints(
        uow=world.uow,
        files=files,
        notices=notices,
        max_bytes=max_bytes,
        scanner=scanner or ScriptedScanner(),
    )


async def opened(world: World) -> Session:
    session = SessionFactory(messages=[], cwd="/p")
    async with world.uow as uow:
        await uow.sessions.add(session)
        await uow.commit()
    return world.registry.open(session).session


async def agent_turn(
    session: Session,
    taken: FileCheckpoints,
    files: InMemoryWorkspaceFiles,
    prompt: str,
    **writes: bytes,
) -> None:
    """A prompt, then the agent writing files (name: content; b"" for none: a removal)."""
    session.add_message(MessageFactory(id=prompt))
    for name, content in writes.items():
        path = f"/p/{name}.txt"
        await taken.before(session, (path,))
        if content:
            files.files[path] = content
        else:
            files.files.pop(path, None)
        await taken.after(session, (path,))
    session.add_message(MessageFactory(id=f"re-{prompt}", reply=True))


def rewind(
    world: World, files: InMemoryWorkspaceFiles, asker: ScriptedAsker | None = None
) -> RewindSession:
    """A rewind whose restores the user allows, unless `asker` says otherwise."""
    permission = RestorePermission(
        asker=asker or ScriptedAsker(*[PermissionOption.ALLOW_ONCE] * 10),
        uow=world.uow,
        clock=world.clock,
        catalog=world.catalog,
        timeout=5.0,
    )
    return RewindSession(
        uow=world.uow,
        registry=world.registry,
        sink=world.sink,
        restorer=FileRestorer(uow=world.uow, files=files),
        permission=permission,
    )


async def three_turns(world: World, files: InMemoryWorkspaceFiles) -> Session:
    taken = checkpoints(world, files)
    session = await opened(world)
    await agent_turn(session, taken, files, "u1", a=b"a1")
    await agent_turn(session, taken, files, "u2", a=b"a2", b=b"b2")
    await agent_turn(session, taken, files, "u3", a=b"a3", c=b"c3", b=b"")
    return session


async def test_only_the_first_change_of_a_file_in_a_turn_is_checkpointed(world: World) -> None:
    files = InMemoryWorkspaceFiles({A: b"before"})
    taken = checkpoints(world, files)
    session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    for content in (b"one", b"two"):
        await taken.before(session, (A,))
        files.files[A] = content
        await taken.after(session, (A,))
    (kept,) = await world.uow.checkpoints.checkpoints(session.id)
    assert (kept.message_id, kept.prior, kept.after) == (
        "u1",
        state_of(b"before"),
        state_of(b"two"),
    )
    assert await world.uow.checkpoints.content(session.id, kept.prior) == b"before"


async def test_same_content_is_kept_once(world: World) -> None:
    files = InMemoryWorkspaceFiles({A: b"same", B: b"same"})
    taken = checkpoints(world, files)
    session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    await taken.before(session, (A, B))
    assert len(await world.uow.checkpoints.checkpoints(session.id)) == 2
    assert await world.uow.checkpoints.stored_bytes(session.id) == len(b"same")


async def test_binary_and_oversized_files_are_recorded_as_not_restorable(world: World) -> None:
    files = InMemoryWorkspaceFiles({A: b"\0\1binary", B: b"x" * 200})
    taken = checkpoints(world, files, max_bytes=100)
    session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    await taken.before(session, (A, B, C))
    kept = {c.path: c.unrestorable for c in await world.uow.checkpoints.checkpoints(session.id)}
    assert kept == {A: Unrestorable.BINARY, B: Unrestorable.OVER_LIMIT, C: None}
    assert await world.uow.checkpoints.stored_bytes(session.id) == 0


async def test_the_oldest_checkpoints_are_dropped_to_stay_within_the_limit_with_a_notice(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({A: b"a" * 40, B: b"b" * 40, C: b"c" * 40})
    taken = checkpoints(world, files, max_bytes=100)
    session = await opened(world)
    for prompt, path in (("u1", A), ("u2", B)):
        session.add_message(MessageFactory(id=prompt))
        await taken.before(session, (path,))
    assert world.sink.of_type(SessionNotice) == []
    session.add_message(MessageFactory(id="u3"))
    await taken.before(session, (C,))
    kept = {c.path: c.unrestorable for c in await world.uow.checkpoints.checkpoints(session.id)}
    assert kept == {A: Unrestorable.DROPPED, B: None, C: None}
    assert await world.uow.checkpoints.stored_bytes(session.id) == 80
    (notice,) = world.sink.of_type(SessionNotice)
    assert notice.title == "Older file checkpoints dropped" and "1 file" in (
        notice.description or ""
    )


async def test_a_restoring_rewind_puts_back_the_files_as_they_were_before_the_prompt(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    rewound = await rewind(world, files).execute(session.id, "u2", files=RestoreFiles())
    assert files.files == {A: b"a1", B: b"b0"}  # c.txt (created) removed, b.txt recreated
    assert rewound.files is not None
    assert sorted(rewound.files.restored) == [A, B, C]
    assert [m.id for m in session.messages] == ["u1", "re-u1"]


async def test_undo_writes_the_files_back_as_the_agent_left_them(world: World) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    left = dict(files.files)
    rewound = await rewind(world, files).execute(session.id, "u2", files=RestoreFiles())
    await rewind(world, files).undo(session.id, rewound.undo_token)
    assert files.files == left


async def test_a_file_the_user_changed_is_reported_and_left_unless_forced(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    files.files[A] = b"the user's"
    with pytest.raises(RewindConflict) as refused:
        await rewind(world, files).execute(session.id, "u2", files=RestoreFiles())
    assert refused.value.details["conflicts"] == [A]
    assert files.files[A] == b"the user's" and len(session.messages) == 6  # nothing done

    skipping = RestoreFiles(OnConflict.SKIP)
    rewound = await rewind(world, files).execute(session.id, "u3", files=skipping)
    assert rewound.files is not None and rewound.files.skipped == (A,)
    assert files.files == {A: b"the user's", B: b"b2"}


async def test_a_forced_restore_overwrites_the_users_change(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    files.files[C] = b"the user's"
    forcing = RestoreFiles(OnConflict.FORCE)
    await rewind(world, files).execute(session.id, "u3", files=forcing)
    assert files.files == {A: b"a2", B: b"b2"}


async def test_a_file_without_kept_content_is_reported_not_restored(world: World) -> None:
    files = InMemoryWorkspaceFiles({A: b"\0binary"})
    taken = checkpoints(world, files)
    session = await opened(world)
    await agent_turn(session, taken, files, "u1", a=b"text now")
    rewound = await rewind(world, files).execute(session.id, "u1", files=RestoreFiles())
    assert rewound.files is not None
    assert rewound.files.unrestorable == ((A, Unrestorable.BINARY),)
    assert files.files == {A: b"text now"}


async def test_plan_mode_refuses_to_restore_files(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    session.set_mode("plan", at=T0)
    with pytest.raises(RestoreRefused):
        await rewind(world, files).execute(session.id, "u2", files=RestoreFiles())
    assert len(session.messages) == 6 and C in files.files


async def test_a_rewind_that_keeps_files_leaves_them(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    left = dict(files.files)
    rewound = await rewind(world, files).execute(session.id, "u2")
    assert rewound.files is None and files.files == left


async def test_a_commands_changes_are_checkpointed_and_an_unknown_prior_is_reported(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({A: b"a0", B: b"b0"})
    scanner = ScriptedScanner()
    taken = checkpoints(world, files, scanner=scanner)
    session = await opened(world)
    session.add_message(MessageFactory(id="u1"))
    scanner.next = (
        ScannedChange(path=A, existed=True, prior=b"a0"),  # from git, say
        ScannedChange(path=B, existed=True),  # prior not known
        ScannedChange(path=C, existed=False),
    )
    watch = await taken.before_command(session)
    files.files.update({A: b"a1", B: b"b1", C: b"c1"})
    await taken.after_command(session, watch)
    assert scanner.watched == [(session.cwd, *session.additional_directories)]

    rewound = await rewind(world, files).execute(session.id, "u1", files=RestoreFiles())
    assert files.files == {A: b"a0", B: b"b1"}
    assert rewound.files is not None
    assert rewound.files.unrestorable == ((B, Unrestorable.PRIOR_UNKNOWN),)


async def test_the_default_mode_asks_with_the_files_and_a_diff_each(world: World) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    asker = ScriptedAsker(PermissionOption.ALLOW_ONCE)
    await rewind(world, files, asker).execute(session.id, "u3", files=RestoreFiles())
    (request,) = asker.requests
    assert request.tool_name == "rewind_restore_files"
    assert sorted(request.locations) == [A, B, C]
    assert sorted(request.preview, key=lambda d: getattr(d, "path", "")) == [
        DiffOutput(path=A, old_text="a3", new_text="a2"),
        DiffOutput(path=B, old_text=None, new_text="b2"),  # deleted: recreated
        DiffOutput(path=C, old_text="c3", new_text=""),  # created: removed
    ]
    assert files.files == {A: b"a2", B: b"b2"}


async def test_a_declined_restore_does_nothing(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    left = dict(files.files)
    for answer in (PermissionOption.REJECT_ONCE, None):
        with pytest.raises(RestoreDeclined):
            await rewind(world, files, ScriptedAsker(answer)).execute(
                session.id, "u2", files=RestoreFiles()
            )
    assert files.files == left and len(session.messages) == 6
    assert not world.registry.is_busy(session.id)


async def test_accept_edits_restores_without_asking(world: World) -> None:
    files = InMemoryWorkspaceFiles()
    session = await three_turns(world, files)
    session.set_mode("accept_edits", at=T0)
    asker = ScriptedAsker()
    await rewind(world, files, asker).execute(session.id, "u2", files=RestoreFiles())
    assert asker.requests == [] and files.files == {A: b"a1"}


async def test_a_fork_at_a_prompt_carries_the_checkpoints_of_the_turns_it_holds(
    world: World,
) -> None:
    files = InMemoryWorkspaceFiles({B: b"b0"})
    session = await three_turns(world, files)
    forked = await world.fork().execute(session.id, session.cwd, at_message_id="u3")
    carried = await world.uow.checkpoints.checkpoints(forked.session_id)
    assert {(c.message_id, c.path) for c in carried} == {("u1", A), ("u2", A), ("u2", B)}

    # The source's third turn changed the files since the fork's last change: conflicts.
    with pytest.raises(RewindConflict) as refused:
        await rewind(world, files).execute(forked.session_id, "u2", files=RestoreFiles())
    assert refused.value.details["conflicts"] == sorted([A, B])
    forcing = RestoreFiles(OnConflict.FORCE)
    rewound = await rewind(world, files).execute(forked.session_id, "u2", files=forcing)
    assert rewound.files is not None and sorted(rewound.files.restored) == [A, B]
    assert files.files == {A: b"a1", B: b"b0", C: b"c3"}
