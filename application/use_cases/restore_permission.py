"""Restoring files is a write: in the default mode the user is asked first, with the list
of files and a diff per file (accept_edits and bypass do not ask; plan mode refuses before
anything is planned: RewindSession)."""

import asyncio

from application.errors import RestoreDeclined
from application.ports.permissions import PermissionAsker, PermissionRequest, PermissionUnavailable
from application.use_cases.file_checkpoints import FileChange
from domain.ids import ToolCallId
from domain.modes import ModeId
from domain.permission import PermissionOption
from domain.session import Session
from domain.text import is_binary
from domain.tool_call import DiffOutput, ToolKind, ToolOutput

RESTORE_TOOL = "rewind_restore_files"  # the name the request's tool call carries
ASKS_IN = frozenset({ModeId.DEFAULT})


class RestorePermission:
    def __init__(self, *, asker: PermissionAsker, timeout: float) -> None:
        self._asker = asker
        self._timeout = timeout

    async def check(self, session: Session, token: str, changes: tuple[FileChange, ...]) -> None:
        """Raises RestoreDeclined unless the session's mode allows the writes or the user
        allowed them."""
        if session.mode_id not in ASKS_IN or not changes:
            return
        request = PermissionRequest(
            tool_call_id=ToolCallId(f"rewind_restore_{token}"),
            tool_name=RESTORE_TOOL,
            title=f"Restore {len(changes)} file(s) as they were before the prompt",
            kind=ToolKind.EDIT,
            arguments={"paths": [change.path for change in changes]},
            locations=tuple(change.path for change in changes),
            preview=tuple(output for change in changes if (output := _diff(change)) is not None),
            options=(PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE),
        )
        try:
            chosen = await asyncio.wait_for(self._asker.ask(session.id, request), self._timeout)
        except (TimeoutError, PermissionUnavailable) as exc:
            raise RestoreDeclined(
                f"Restoring files needs the user's permission, which was not given ({exc!r}).",
                sessionId=session.id,
            ) from exc
        if chosen is None or not chosen.allows:
            raise RestoreDeclined(sessionId=session.id, answer=chosen and chosen.value)


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
