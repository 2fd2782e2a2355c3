"""Putting files back: what a rewind (from the checkpoints) or its undo (from what the
restore overwrote) would do to each file, what it would write (for the user to see), and
the writes themselves, only inside the session's directories (the WorkspaceFiles port).

Each path is decided by domain.restore's rule. A file is written only if it still holds what
the plan read: one the user changes while they are asked is left, and reported skipped."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from application.ports.checkpoints import PathRefused, WorkspaceFiles
from application.ports.unit_of_work import UnitOfWork
from domain.checkpoints import (
    ABSENT,
    NOT_A_FILE,
    FileRestore,
    Unrestorable,
    conflicts_of,
    files_to_restore,
    state_of,
)
from domain.restore import (
    OnConflict,
    RestoreStep,
    Step,
    UndoFile,
    restore_steps,
    undo_restores,
)
from domain.session import Session

Directories = tuple[str, ...]


def directories_of(session: Session) -> Directories:
    """Where a session may write files back: its cwd and extra directories."""
    return (session.cwd, *session.additional_directories)


@dataclass(frozen=True, slots=True, kw_only=True)
class RestorePlan:
    """The files a restore would put back and what each holds now: `current` its bytes (a
    path where no regular file stands has none: its state is NOT_A_FILE), `given` the
    content of states the checkpoint store does not hold (an undo's)."""

    restores: tuple[FileRestore, ...]
    states: Mapping[str, str]
    current: Mapping[str, bytes | None]
    given: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def conflicts(self) -> tuple[str, ...]:
        return conflicts_of(self.restores, self.states)

    def decided(self, on_conflict: OnConflict) -> "PlannedRestore":
        return PlannedRestore(self, restore_steps(self.restores, self.states, on_conflict))


@dataclass(frozen=True, slots=True)
class PlannedRestore:
    """A plan and what it decided for each file, given what to do with conflicts."""

    plan: RestorePlan
    steps: tuple[RestoreStep, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file a restore would write: what it holds now, what it would hold (None: no file)."""

    path: str
    now: bytes | None
    restored: bytes | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FilesRestored:
    restored: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # conflicts left as they are (or changed while asked)
    unrestorable: tuple[tuple[str, Unrestorable], ...] = ()
    undo: tuple[UndoFile, ...] = ()  # what the writes overwrote: the undo puts it back


class FileRestorer:
    """Plans a restore from the checkpoints (a rewind) or from what a restore overwrote (its
    undo), says what it would write, and writes it. Reads the store in short reading units
    of work; writes only files, never the store."""

    def __init__(self, *, uow: UnitOfWork, files: WorkspaceFiles) -> None:
        self._uow = uow
        self._files = files

    async def plan(self, session: Session, cut: frozenset[str]) -> RestorePlan:
        """What restoring the files of the cut turns (their prompts' ids) would do."""
        async with self._uow.reading() as uow:
            restores = files_to_restore(await uow.checkpoints.checkpoints(session.id), cut)
        return await self._planned(session, restores, {})

    async def plan_undo(self, session: Session, files: tuple[UndoFile, ...]) -> RestorePlan:
        """What putting back the files a restore overwrote would do."""
        given = {state_of(f.content): f.content for f in files if f.content is not None}
        return await self._planned(session, undo_restores(files), given)

    async def changes(self, session_id: str, planned: PlannedRestore) -> tuple[FileChange, ...]:
        """What the restore would write, file by file: every path it would touch."""
        plan = planned.plan
        changes: list[FileChange] = []
        for s in planned.steps:
            if s.step is Step.PUT:
                restored = await self._content(session_id, plan, s.restore.prior)
                changes.append(FileChange(path=s.path, now=plan.current[s.path], restored=restored))
        return tuple(changes)

    async def apply(self, session: Session, planned: PlannedRestore) -> FilesRestored:
        """Take each step: the files put back, and what their writes overwrote."""
        plan, report = planned.plan, _Report()
        for s in planned.steps:
            match s.step:
                case Step.KEPT:
                    report.restored.append(s.path)
                case Step.SKIPPED:
                    report.skipped.append(s.path)
                case Step.UNRESTORABLE:
                    report.unrestorable.append((s.path, s.reason or Unrestorable.NOT_A_FILE))
                case Step.PUT:
                    await self._put(session, plan, s.restore, report)
        return report.done()

    async def _planned(
        self, session: Session, restores: list[FileRestore], given: dict[str, bytes]
    ) -> RestorePlan:
        directories = directories_of(session)
        current: dict[str, bytes | None] = {}
        states: dict[str, str] = {}
        for restore in restores:
            if restore.unrestorable is not None:
                continue
            content, states[restore.path] = await self._state(directories, restore.path)
            current[restore.path] = content
        return RestorePlan(restores=tuple(restores), states=states, current=current, given=given)

    async def _state(self, directories: Directories, path: str) -> tuple[bytes | None, str]:
        try:
            content = await self._files.read(directories, path)
        except PathRefused:
            return None, NOT_A_FILE
        return content, state_of(content)

    async def _put(
        self, session: Session, plan: RestorePlan, restore: FileRestore, report: "_Report"
    ) -> None:
        path, directories = restore.path, directories_of(session)
        content = await self._content(session.id, plan, restore.prior)
        if restore.prior != ABSENT and content is None:  # pruned since the plan
            report.unrestorable.append((path, Unrestorable.DROPPED))
            return
        _, now = await self._state(directories, path)
        if now != plan.states[path]:  # changed since the plan (while the user was asked)
            report.skipped.append(path)
            return
        try:
            if content is None:
                await self._files.remove(directories, path)
            else:
                await self._files.write(directories, path, content)
        except PathRefused as refused:
            report.unrestorable.append((path, refused.reason))
            return
        report.restored.append(path)
        report.undo.append(UndoFile(path=path, content=plan.current[path], left=restore.prior))

    async def _content(self, session_id: str, plan: RestorePlan, state: str) -> bytes | None:
        if state == ABSENT:
            return None
        if state in plan.given:
            return plan.given[state]
        async with self._uow.reading() as uow:
            return await uow.checkpoints.content(session_id, state)


@dataclass(slots=True)
class _Report:
    restored: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unrestorable: list[tuple[str, Unrestorable]] = field(default_factory=list)
    undo: list[UndoFile] = field(default_factory=list)

    def done(self) -> FilesRestored:
        return FilesRestored(
            restored=tuple(self.restored),
            skipped=tuple(self.skipped),
            unrestorable=tuple(self.unrestorable),
            undo=tuple(self.undo),
        )
