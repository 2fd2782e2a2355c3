"""What a session keeps of the calls the runner runs for it: the files they change,
checkpointed before and after (a rewind restores them), and the instructions of the
directories they work in, brought into the context the first time."""

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Protocol

from application.checkpoints.file_checkpoints import FileCheckpoints
from application.knowledge.briefing import Briefer
from application.runtime.registry import SessionRegistry
from domain.session import Session
from domain.tool_call import ToolCallRecord

# Tools whose paths bring a subdirectory's instructions (AGENTS.md) into the context.
WORKS_IN_DIRECTORIES = frozenset({"read_file", "write_file", "edit_file", "list_files"})
# Tools that change the files they name: the files' prior states are checkpointed first.
CHANGES_FILES = frozenset({"write_file", "edit_file"})

After = Callable[[], Awaitable[None]]


class CallWatch(Protocol):
    @abstractmethod
    async def before(self, session: Session, call: ToolCallRecord) -> After:
        """Called before the call runs; what it returns, once it ran (or was cancelled)."""

    @abstractmethod
    async def nested(self, session: Session, call: ToolCallRecord) -> str:
        """What the model learns besides a successful call's result ("" for nothing)."""


class SessionWatch(CallWatch):
    """- Before `write_file`/`edit_file` first changes a file in a turn, its prior state is
      checkpointed (FileCheckpoints), and after, the state the agent left it in; a `bash`
      command's changes in the session's directories are found by comparing scans.
    - A file tool working in a subdirectory brings that directory's instructions with its
      result, the first time."""

    def __init__(
        self, *, checkpoints: FileCheckpoints, registry: SessionRegistry, briefer: Briefer
    ) -> None:
        self._checkpoints = checkpoints
        self._registry = registry
        self._briefer = briefer

    async def before(self, session: Session, call: ToolCallRecord) -> After:
        checkpoints = self._checkpoints
        if call.name in CHANGES_FILES:
            await checkpoints.before(session, call.locations)
            return lambda: checkpoints.after(session, call.locations)
        if call.name == "bash":
            watch = await checkpoints.before_command(session)
            return lambda: checkpoints.after_command(session, watch)
        return nothing

    async def nested(self, session: Session, call: ToolCallRecord) -> str:
        active = self._registry.find(session.id)
        if call.name not in WORKS_IN_DIRECTORIES or active is None:
            return ""
        return await self._briefer.nested(active, call.locations)


async def nothing() -> None:
    return None
