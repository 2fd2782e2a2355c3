"""Restoring files is a write, decided by the one permission rule every tool call goes
through (domain.permission.decide, for RESTORE_FILES, an edit): plan mode refuses it, before
anything is planned; accept_edits and bypass allow it; the default mode asks, with every
file it will write or remove and a diff per file. Each decision is stored in the activity
log as a tool call's is (the request's id and name, the paths as its arguments, who
decided), and the session learns it."""

import asyncio
from dataclasses import dataclass

from application.checkpoints.restoring import FileChange
from application.errors import RestoreDeclined, RestoreRefused
from application.ports.clock import Clock
from application.ports.permissions import PermissionAsker, PermissionRequest, PermissionUnavailable
from application.ports.unit_of_work import UnitOfWork
from domain.config import Catalog
from domain.ids import ToolCallId
from domain.permission import Decider, PermissionDecision, PermissionOption, Verdict, decide
from domain.restore import RESTORE_FILES
from domain.session import Session
from domain.text import is_binary
from domain.tool_call import DiffOutput, ToolOutput

OFFERED = (PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE)  # nothing remembered


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoreCall:
    """One restore as the permission rule sees a tool call: `id` names its request and its
    recorded decision, `title` says what it puts the files back to."""

    id: ToolCallId
    title: str


class RestorePermission:
    def __init__(
        self,
        *,
        asker: PermissionAsker,
        uow: UnitOfWork,
        clock: Clock,
        catalog: Catalog,
        timeout: float,
    ) -> None:
        self._asker = asker
        self._uow = uow
        self._clock = clock
        self._catalog = catalog
        self._timeout = timeout

    async def check(
        self, session: Session, call: RestoreCall, changes: tuple[FileChange, ...] = ()
    ) -> None:
        """Raises RestoreRefused (the mode allows no writes) or RestoreDeclined (not
        allowed) unless the files in `changes` may be written. Without changes only a
        refusal is decided (and recorded): called so before the restore is planned."""
        verdict = decide(
            RESTORE_FILES,
            self._catalog.usable_mode(session.mode_id),
            always_asks=False,  # a restore writes only inside the session's directories
            rejected=session.permissions.rejects(RESTORE_FILES.name),
        )
        match verdict:
            case Verdict.REFUSE:
                await self._record(session, call, changes, PermissionOption.REJECT_ONCE)
                raise RestoreRefused(
                    "Files cannot be restored in plan mode: it allows no writes. Leave plan "
                    'mode first, or rewind with files "keep".',
                    sessionId=session.id,
                    modeId=session.mode_id,
                )
            case Verdict.REJECT:
                await self._record(
                    session, call, changes, PermissionOption.REJECT_ALWAYS, Decider.SESSION_RULE
                )
                raise RestoreDeclined(sessionId=session.id, answer="reject_always")
            case Verdict.ALLOW if changes:
                await self._record(session, call, changes, PermissionOption.ALLOW_ONCE)
            case Verdict.ASK if changes:
                await self._ask(session, call, changes)

    async def _ask(
        self, session: Session, call: RestoreCall, changes: tuple[FileChange, ...]
    ) -> None:
        try:
            chosen = await asyncio.wait_for(
                self._asker.ask(session.id, _request(call, changes)), self._timeout
            )
        except (TimeoutError, PermissionUnavailable) as exc:
            decider = Decider.TIMEOUT if isinstance(exc, TimeoutError) else Decider.CLIENT_ERROR
            await self._record(session, call, changes, None, decider)
            raise RestoreDeclined(
                f"Restoring files needs the user's permission, which was not given ({exc!r}).",
                sessionId=session.id,
            ) from exc
        await self._record(session, call, changes, chosen, Decider.USER)
        if chosen is None or not chosen.allows:
            raise RestoreDeclined(sessionId=session.id, answer=chosen and chosen.value)

    async def _record(
        self,
        session: Session,
        call: RestoreCall,
        changes: tuple[FileChange, ...],
        option: PermissionOption | None,
        decider: Decider = Decider.MODE,
    ) -> None:
        decision = PermissionDecision(
            tool_call_id=call.id,
            tool_name=RESTORE_FILES.name,
            arguments={"paths": [change.path for change in changes]},
            option=option,
            decided_by=decider,
            decided_at=self._clock.now(),
        )
        session.permissions.learn(decision)
        async with self._uow as uow:
            await uow.activity.record_permission(session.id, decision)
            await uow.commit()


def _request(call: RestoreCall, changes: tuple[FileChange, ...]) -> PermissionRequest:
    paths = tuple(change.path for change in changes)
    return PermissionRequest(
        tool_call_id=call.id,
        tool_name=RESTORE_FILES.name,
        title=call.title.format(count=len(changes)),
        kind=RESTORE_FILES.kind,
        arguments={"paths": list(paths)},
        locations=paths,
        preview=tuple(output for change in changes if (output := _diff(change)) is not None),
        options=OFFERED,
    )


def _diff(change: FileChange) -> ToolOutput | None:
    """The change as a diff (removing a file: to empty); none for a file that is not text."""
    now, restored = _text(change.now), _text(change.restored)
    if (change.now is not None and now is None) or (
        change.restored is not None and restored is None
    ):
        return None
    return DiffOutput(path=change.path, old_text=now, new_text=restored or "")


def _text(content: bytes | None) -> str | None:
    """The content as text; None for no file or one that is not text."""
    if content is None or is_binary(content[:8192]):
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None
