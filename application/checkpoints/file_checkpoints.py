"""Taking file checkpoints as the agent changes files (putting them back: restoring.py).

Before the agent first changes a file in a turn, its prior bytes (or its absence) are kept
in the session store, linked to the turn's prompt; after each change, the state the agent
left it in (to tell a user's later edit from the agent's). The session's checkpoints keep
at most `max_bytes` of content: the oldest are dropped first, with a notice. A file outside
the session's directories, or reached through a symlink, is recorded as not restorable:
a rewind never writes there."""

from application.checkpoints.restoring import FilesRestored as FilesRestored  # rewind_wire's
from application.checkpoints.restoring import directories_of
from application.notices.session_notices import SessionNotices, Severity
from application.ports.checkpoints import (
    CheckpointStore,
    FileScanner,
    PathRefused,
    ScanWatch,
    WorkspaceFiles,
)
from application.ports.unit_of_work import UnitOfWork
from domain.checkpoints import (
    ABSENT,
    FILE_LIMIT,
    NOT_A_FILE,
    UNKNOWN,
    FileCheckpoint,
    Unrestorable,
    state_of,
)
from domain.session import Session
from domain.text import is_binary


class FileCheckpoints:
    def __init__(
        self,
        *,
        uow: UnitOfWork,
        files: WorkspaceFiles,
        notices: SessionNotices,
        max_bytes: int,
        scanner: FileScanner,
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
            await self._take(session, message_id, path)

    async def before_command(self, session: Session) -> ScanWatch | None:
        """Snapshot the session's directories before a shell command."""
        if session.last_prompt_id() is None:
            return None
        return await self._scanner.watch(directories_of(session))

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
                    unrestorable=change.unknown,
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
            seen = await self._seen(session, path)
            state = NOT_A_FILE if isinstance(seen, Unrestorable) else state_of(seen)
            async with self._uow as uow:
                await uow.checkpoints.written(session.id, message_id, path, state)
                await uow.commit()

    async def _take(self, session: Session, message_id: str, path: str) -> None:
        async with self._uow.reading() as uow:
            if await uow.checkpoints.has(session.id, message_id, path):
                return
        seen = await self._seen(session, path)
        if isinstance(seen, Unrestorable):  # a rewind could not write there: never will
            refused = FileCheckpoint(
                message_id=message_id, path=path, prior=NOT_A_FILE, unrestorable=seen
            )
            await self._keep(session.id, refused, None)
            return
        await self._keep(session.id, self._checkpoint(message_id, path, seen), seen)

    async def _seen(self, session: Session, path: str) -> bytes | Unrestorable | None:
        """The file's bytes (None: no file), read as a restore would reach it; where a
        restore could not write, why."""
        try:
            return await self._files.read(directories_of(session), path)
        except PathRefused as refused:
            return refused.reason

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
