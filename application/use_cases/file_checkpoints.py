"""Taking file checkpoints as the agent changes files, and putting files back on a rewind.

Before the agent first changes a file in a turn, its prior bytes (or its absence) are kept
in the session store, linked to the turn's prompt; after each change, the state the agent
left it in (to tell a user's later edit from the agent's). The session's checkpoints keep
at most `max_bytes` of content: the oldest are dropped first, with a notice."""

from dataclasses import dataclass

from application.ports.checkpoints import CheckpointStore, FileBytes, FileScanner, ScanWatch
from application.ports.unit_of_work import UnitOfWork
from application.use_cases.session_notices import SessionNotices, Severity
from domain.checkpoints import (
    ABSENT,
    UNKNOWN,
    FileCheckpoint,
    FileRestore,
    Unrestorable,
    conflicts_of,
    files_to_restore,
    state_of,
)
from domain.session import Session
from domain.text import is_binary

FILE_LIMIT = 1024 * 1024  # bytes: a bigger file's checkpoint keeps no content


@dataclass(frozen=True, slots=True, kw_only=True)
class RestorePlan:
    """What a rewind would do to the files the cut turns changed: `current` holds their
    bytes now (what an undo of the rewind puts back)."""

    restores: tuple[FileRestore, ...]
    conflicts: tuple[str, ...]
    current: dict[str, bytes | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file a restore would write: what it holds now, what it would hold (None: no file)."""

    path: str
    now: bytes | None
    restored: bytes | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FilesRestored:
    restored: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # conflicts the client chose to leave as they are
    unrestorable: tuple[tuple[str, Unrestorable], ...] = ()
    previous: tuple[tuple[str, bytes | None], ...] = ()  # before the restore: for the undo


class FileCheckpoints:
    def __init__(
        self,
        *,
        uow: UnitOfWork,
        files: FileBytes,
        notices: SessionNotices,
        max_bytes: int,
        scanner: FileScanner | None = None,  # None: what commands change is not seen
    ) -> None:
        self._uow = uow
        self._files = files
        self._notices = notices
        self._max_bytes = max_bytes
        self._scanner = scanner

    async def before(self, session: Session, paths: tuple[str, ...]) -> None:
        """Keep each path's state unless this turn already did."""
        message_id = session.last_prompt_id()
        if message_id is None:
            return
        for path in paths:
            await self._take(session.id, message_id, path)

    async def before_command(self, session: Session) -> ScanWatch | None:
        """Snapshot the session's directories before a shell command."""
        if self._scanner is None or session.last_prompt_id() is None:
            return None
        return await self._scanner.watch((session.cwd, *session.additional_directories))

    async def after_command(self, session: Session, watch: ScanWatch | None) -> None:
        """Checkpoint the files the command changed (their prior bytes where the scanner
        knows them: see the adapter), and record what it left."""
        message_id = session.last_prompt_id()
        if watch is None or message_id is None:
            return
        changes = await watch.changes()
        for change in changes:
            if change.existed and change.prior is None:
                unknown = FileCheckpoint(
                    message_id=message_id,
                    path=change.path,
                    prior=UNKNOWN,
                    unrestorable=Unrestorable.PRIOR_UNKNOWN,
                )
                await self._keep(session.id, unknown, None)
            else:
                await self._keep(
                    session.id,
                    self._checkpoint(message_id, change.path, change.prior),
                    change.prior,
                )
        await self.after(session, tuple(change.path for change in changes))

    async def after(self, session: Session, paths: tuple[str, ...]) -> None:
        """Record the state the agent left each path in."""
        message_id = session.last_prompt_id()
        if message_id is None:
            return
        for path in paths:
            state = state_of(await self._files.read(path))
            async with self._uow as uow:
                await uow.checkpoints.written(session.id, message_id, path, state)
                await uow.commit()

    async def plan(self, session_id: str, cut: frozenset[str]) -> RestorePlan:
        """What restoring the files of the cut turns (their prompts' ids) would do."""
        async with self._uow.reading() as uow:
            restores = files_to_restore(await uow.checkpoints.checkpoints(session_id), cut)
        current = {restore.path: await self._files.read(restore.path) for restore in restores}
        states = {path: state_of(content) for path, content in current.items()}
        return RestorePlan(
            restores=tuple(restores), conflicts=conflicts_of(restores, states), current=current
        )

    async def changes(
        self, session_id: str, plan: RestorePlan, *, skip: bool
    ) -> tuple[FileChange, ...]:
        """What a restore would write, file by file (for the user to see before)."""
        changes: list[FileChange] = []
        for restore in plan.restores:
            if restore.unrestorable is not None or (skip and restore.path in plan.conflicts):
                continue
            async with self._uow.reading() as uow:
                restored = await uow.checkpoints.content(session_id, restore.prior)
            now = plan.current[restore.path]
            if state_of(now) != restore.prior:
                changes.append(FileChange(path=restore.path, now=now, restored=restored))
        return tuple(changes)

    async def restore(self, session_id: str, plan: RestorePlan, *, skip: bool) -> FilesRestored:
        """Put every planned path back (conflicts too, unless `skip`)."""
        restored: list[str] = []
        skipped: list[str] = []
        unrestorable: list[tuple[str, Unrestorable]] = []
        previous: list[tuple[str, bytes | None]] = []
        for restore in plan.restores:
            if restore.unrestorable is not None:
                unrestorable.append((restore.path, restore.unrestorable))
            elif skip and restore.path in plan.conflicts:
                skipped.append(restore.path)
            elif await self._put(session_id, restore):
                restored.append(restore.path)
                previous.append((restore.path, plan.current[restore.path]))
            else:  # its content was pruned since the plan
                unrestorable.append((restore.path, Unrestorable.DROPPED))
        return FilesRestored(
            restored=tuple(restored),
            skipped=tuple(skipped),
            unrestorable=tuple(unrestorable),
            previous=tuple(previous),
        )

    async def put_back(self, files: tuple[tuple[str, bytes | None], ...]) -> None:
        """Write files as they were before a restore (its undo)."""
        for path, content in files:
            if content is None:
                await self._files.remove(path)
            else:
                await self._files.write(path, content)

    async def _put(self, session_id: str, restore: FileRestore) -> bool:
        if restore.prior == ABSENT:
            await self._files.remove(restore.path)
            return True
        async with self._uow.reading() as uow:
            content = await uow.checkpoints.content(session_id, restore.prior)
        if content is None:
            return False
        await self._files.write(restore.path, content)
        return True

    async def _take(self, session_id: str, message_id: str, path: str) -> None:
        async with self._uow.reading() as uow:
            if await uow.checkpoints.has(session_id, message_id, path):
                return
        content = await self._files.read(path)
        await self._keep(session_id, self._checkpoint(message_id, path, content), content)

    async def _keep(
        self, session_id: str, checkpoint: FileCheckpoint, content: bytes | None
    ) -> None:
        """Store the checkpoint unless the turn has one for the path; with its content when
        it is restorable, making room for it."""
        dropped = 0
        async with self._uow as uow:
            store = uow.checkpoints
            if await store.has(session_id, checkpoint.message_id, checkpoint.path):
                return
            restorable = checkpoint.unrestorable is None
            if restorable and content is not None:
                dropped = await self._make_room(store, session_id, content)
            await store.add(session_id, checkpoint, content if restorable else None)
            await uow.commit()
        if dropped:
            await self._notices.tell_session(
                session_id,
                Severity.WARNING,
                "Older file checkpoints dropped",
                f"{dropped} file checkpoint(s) were dropped, oldest first, to stay within "
                f"{self._max_bytes} bytes: a rewind to before them cannot restore those files.",
            )

    def _checkpoint(self, message_id: str, path: str, content: bytes | None) -> FileCheckpoint:
        return FileCheckpoint(
            message_id=message_id,
            path=path,
            prior=state_of(content),
            unrestorable=_unrestorable(content, self._max_bytes),
        )

    async def _make_room(self, store: CheckpointStore, session_id: str, content: bytes) -> int:
        """Drop the oldest checkpoints with content until `content` fits; how many."""
        if await store.content(session_id, state_of(content)) is not None:
            return 0  # already kept: deduplicated, no more room needed
        dropped = 0
        used = await store.stored_bytes(session_id)
        kept = [c for c in await store.checkpoints(session_id) if _keeps_content(c)]
        while kept and used + len(content) > self._max_bytes:
            await store.drop(session_id, kept.pop(0).seq)
            dropped += 1
            used = await store.stored_bytes(session_id)
        return dropped


async def carry_checkpoints(store: CheckpointStore, source_id: str, fork: Session) -> None:
    """Copy into `fork` the checkpoints of `source_id`'s turns it holds, with their content."""
    held = {message.id for message in fork.messages}
    for checkpoint in await store.checkpoints(source_id):
        if checkpoint.message_id in held:
            content = await store.content(source_id, checkpoint.prior)
            await store.add(fork.id, checkpoint, content)


def _keeps_content(checkpoint: FileCheckpoint) -> bool:
    return checkpoint.unrestorable is None and checkpoint.prior != ABSENT


def _unrestorable(content: bytes | None, max_bytes: int) -> Unrestorable | None:
    if content is None:
        return None
    if len(content) > max_bytes:
        return Unrestorable.OVER_LIMIT
    if len(content) > FILE_LIMIT:
        return Unrestorable.TOO_LARGE
    if is_binary(content[:8192]):
        return Unrestorable.BINARY
    return None
