"""session/list in plain JSON, without `acp.schema`: served while the agent still loads
(bootstrap/early.py). Only plainly valid params are taken; anything else (and every
error) is left to the full agent, so errors read the same as ever. A test checks that
the result equals `wire.list_result`."""

import os
from datetime import UTC, datetime
from typing import Any

from adapters.acp_v1.worktree_meta import listed_meta
from application.ports.session_listing import SessionSummary
from application.sessions.listing import SessionPage


def plain_list_params(params: dict[str, Any] | None) -> tuple[str | None, str | None] | None:
    """(cwd, cursor) of params the agent would accept as they are; else None."""
    if params is None:
        return None, None
    if not isinstance(params, dict) or not set(params) <= {"cwd", "cursor"}:
        return None
    cwd, cursor = params.get("cwd"), params.get("cursor")
    if not (cwd is None or (isinstance(cwd, str) and os.path.isabs(cwd))):
        return None
    if not (cursor is None or isinstance(cursor, str)):
        return None
    return cwd, cursor


def plain_list_result(page: SessionPage) -> dict[str, Any]:
    """What `wire.list_result` answers for `page`, field for field."""
    result: dict[str, Any] = {"sessions": [_info(s) for s in page.sessions]}
    if page.next_cursor is not None:
        result["nextCursor"] = page.next_cursor
    return result


def _info(summary: SessionSummary) -> dict[str, Any]:
    info: dict[str, Any] = {"sessionId": summary.session_id, "cwd": summary.cwd}
    if summary.additional_directories:
        info["additionalDirectories"] = list(summary.additional_directories)
    if summary.title is not None:
        info["title"] = summary.title
    info["updatedAt"] = _iso(summary.updated_at)
    meta = listed_meta(summary)
    if meta is not None:
        info["_meta"] = meta
    return info


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
