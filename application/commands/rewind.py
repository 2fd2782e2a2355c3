"""/rewind: list the recent prompts, rewind to one (`/rewind n [restore [force|skip]]`), or
undo the last rewind (`/rewind undo [force|skip]`: what to do with files changed since the
rewind restored them).

Its own prompt and answer are not stored (its spec says `stored=False`): a /rewind would
otherwise sit inside the history it cuts, and its answer, appended after the cut, would end
the undo it offers."""

from application.checkpoints.restoring import FilesRestored
from application.errors import RestoreRefused, RewindConflict, RewindNotUndoable
from application.rewind.rewind import OnConflict, RestoreFiles, RewindSession, Rewound
from application.runtime.command_registry import CommandInput
from domain.commands import CommandSpec
from domain.errors import DetailedError
from domain.message import Message, Role
from domain.session import Session

LISTED = 10  # prompts `/rewind` lists, most recent first
WORDS = 8  # words of each prompt shown

USAGE = (
    "Usage: `/rewind` lists the recent prompts; `/rewind n` goes back to just before the n-th "
    "most recent one, keeping the files (`/rewind n restore` puts them back too; add `force` "
    "or `skip` for files you changed since); `/rewind undo` undoes the last rewind (`force` "
    "or `skip` likewise)."
)

_CONFLICTS = {"": OnConflict.REFUSE, "force": OnConflict.FORCE, "skip": OnConflict.SKIP}


class RewindCommand:
    spec = CommandSpec(
        name="rewind",
        description="Go back to before one of your recent prompts (`undo`: take it back)",
        hint="n [restore] | undo",
        stored=False,
    )

    def __init__(self, *, rewind: RewindSession) -> None:
        self._rewind = rewind

    async def run(self, command: CommandInput) -> str:
        words = command.argument.lower().split()
        try:
            match words:
                case []:
                    return listing(command.session)
                case ["undo", *rest] if " ".join(rest) in _CONFLICTS:
                    return await self._undo(command, RestoreFiles(_CONFLICTS[" ".join(rest)]))
                case [n, *rest] if n.isdigit() and (files := _files(rest))[0]:
                    return await self._to(command, int(n), files[1])
                case _:
                    return USAGE
        except (RewindConflict, RestoreRefused, RewindNotUndoable) as refused:
            return f"Nothing was done: {refused}{_conflicts(refused)}"

    async def _to(self, command: CommandInput, n: int, files: RestoreFiles | None) -> str:
        prompts = recent_prompts(command.session)
        if not 1 <= n <= len(prompts):
            return f"There is no prompt {n}: `/rewind` lists the {len(prompts)} recent ones."
        target = prompts[n - 1]
        rewound = await self._rewind.execute(
            command.session.id, target.id, hold=command.control, files=files
        )
        return _rewound(target, rewound)

    async def _undo(self, command: CommandInput, files: RestoreFiles) -> str:
        session_id = command.session.id
        token = await self._rewind.undo_token(session_id)
        if token is None:
            return "There is no rewind to undo."
        undone = await self._rewind.undo_rewind(
            session_id, token, hold=command.control, files=files
        )
        said = (
            f"The last rewind was undone: the history holds {undone.message_count} messages again."
        )
        return said + ("" if undone.files is None else _files_told(undone.files))


def recent_prompts(session: Session) -> list[Message]:
    """The prompts the user sent (rewind points), most recent first."""
    return [
        m
        for m in reversed(session.messages)
        if m.role is Role.USER and m.is_chat and not m.tool_results
    ]


def listing(session: Session) -> str:
    prompts = recent_prompts(session)[:LISTED]
    if not prompts:
        return "No prompt to go back to yet."
    lines = ["Recent prompts, most recent first (`/rewind n` goes back to before prompt n):"]
    lines += [f"{n}. “{_preview(m)}” (id {m.id})" for n, m in enumerate(prompts, 1)]
    return "\n".join(lines)


def _preview(message: Message) -> str:
    words = " ".join(getattr(b, "text", "") for b in message.content).split()
    return " ".join(words[:WORDS]) + ("…" if len(words) > WORDS else "")


def _files(words: list[str]) -> tuple[bool, RestoreFiles | None]:
    """`restore [force|skip]`: (True, RestoreFiles); nothing: (True, None), the files kept;
    anything else: (False, None), not understood."""
    match words:
        case []:
            return True, None
        case ["restore", *rest] if len(rest) <= 1 and " ".join(rest) in _CONFLICTS:
            return True, RestoreFiles(on_conflict=_CONFLICTS[" ".join(rest)])
        case _:
            return False, None


def _rewound(target: Message, rewound: Rewound) -> str:
    said = (
        f"Rewound to before “{_preview(target)}”: {rewound.message_count} messages remain. "
        "`/rewind undo` takes it back until the next prompt."
    )
    return said + ("" if rewound.files is None else _files_told(rewound.files))


def _files_told(files: FilesRestored) -> str:
    said = f" Files restored: {len(files.restored)}."
    if files.skipped:
        said += f" Left as you changed them: {', '.join(files.skipped)}."
    if files.unrestorable:
        paths = ", ".join(path for path, _ in files.unrestorable)
        said += f" Not restorable: {paths}."
    return said


def _conflicts(refused: DetailedError) -> str:
    conflicts = refused.details.get("conflicts")
    if not isinstance(conflicts, list) or not conflicts:
        return ""
    return " Changed since: " + ", ".join(str(c) for c in conflicts) + "."
