"""A session's own git worktree: where it works, on which branch, from which commit."""

from dataclasses import dataclass
from enum import StrEnum

BRANCH_PREFIX = "iac-code/"


class Isolation(StrEnum):
    NONE = "none"  # the session works in the directory it was opened in
    WORKTREE = "worktree"  # in a git worktree of its own, on a branch of its own


@dataclass(frozen=True, slots=True, kw_only=True)
class Worktree:
    path: str  # the worktree's top directory
    branch: str  # `iac-code/<short id>`
    base: str | None  # the commit it started from (None: not recorded)


def branch_for(session_id: str) -> str:
    """`iac-code/` and the session id's first 8 characters after its prefix (`sess_`)."""
    _, _, rest = session_id.partition("_")
    return BRANCH_PREFIX + (rest or session_id)[:8]
