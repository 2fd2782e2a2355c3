"""`_meta.iac_code.worktree` — `{path, branch, base}` — of a session working in its own git
worktree: in `session/new`'s and `session/fork`'s answers, and in each `session/list`
entry."""

from typing import Any

from adapters.acp_v1.child_sessions import spawn_meta
from application.ports.session_listing import SessionSummary
from domain.worktree import Worktree


def worktree_json(worktree: Worktree) -> dict[str, Any]:
    return {"path": worktree.path, "branch": worktree.branch, "base": worktree.base}


def worktree_meta(worktree: Worktree | None) -> dict[str, Any] | None:
    return None if worktree is None else {"iac_code": {"worktree": worktree_json(worktree)}}


def listed_meta(summary: SessionSummary) -> dict[str, Any] | None:
    """A list entry's `_meta`: where a child came from, the session's worktree."""
    meta = spawn_meta(summary.spawn)
    if summary.worktree is None:
        return meta
    ours = {**((meta or {}).get("iac_code") or {}), "worktree": worktree_json(summary.worktree)}
    return {**(meta or {}), "iac_code": ours}
