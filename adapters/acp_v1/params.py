"""The checks the params models do not make (the models themselves: the SDK's, and
requests.py for the methods it has none for; adapters.protocol.dispatch reads every
route's params through its model)."""

import os
from typing import Any

from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from domain.worktree import Isolation


def no_mcp_default(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The product documents (and their curl walkthrough) treat mcpServers as optional;
    the schema requires it. A missing list means no servers."""
    if isinstance(params, dict) and "mcpServers" not in params:
        return {**params, "mcpServers": []}
    return params


def check_cwd(cwd: str) -> None:
    if not os.path.isabs(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd must be an absolute path.",
            {"field": "cwd", "cwd": cwd, "reason": "not absolute"},
        )
    if not os.path.isdir(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd is not an existing directory.",
            {"field": "cwd", "cwd": cwd, "reason": "no such directory"},
        )


def check_list_cwd(cwd: str | None) -> None:
    """session/list's optional filter: absolute, but it need not exist any more."""
    if cwd is not None and not os.path.isabs(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd must be an absolute path.",
            {"field": "cwd", "cwd": cwd},
        )


def fork_point(meta: dict[str, Any] | None) -> str | None:
    """The prompt a `session/fork` forks before: `_meta.iac_code.atMessageId` (None: the
    whole history)."""
    ours = (meta or {}).get("iac_code")
    at = ours.get("atMessageId") if isinstance(ours, dict) else None
    if at is not None and not isinstance(at, str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: _meta.iac_code.atMessageId must be a message id (a string).",
            {"method": "session/fork", "field": "_meta.iac_code.atMessageId", "received": at},
        )
    return at


def isolation(meta: dict[str, Any] | None) -> Isolation | None:
    """`session/new`'s `_meta.iac_code.isolation` (`worktree` or `none`); None: not asked."""
    ours = (meta or {}).get("iac_code")
    asked = ours.get("isolation") if isinstance(ours, dict) else None
    if asked is None:
        return None
    if asked not in tuple(Isolation):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: _meta.iac_code.isolation must be one of: "
            + ", ".join(Isolation)
            + ".",
            {"method": "session/new", "field": "_meta.iac_code.isolation", "received": asked},
        )
    return Isolation(asked)


def discard_worktree(meta: dict[str, Any] | None) -> bool:
    """`session/delete`'s `_meta.iac_code.discardWorktree`: lose what its worktree holds."""
    ours = (meta or {}).get("iac_code")
    return isinstance(ours, dict) and ours.get("discardWorktree") is True


def check_prompt(prompt: list[Any]) -> None:
    """A prompt (read by its model) holds at least one block."""
    if not prompt:
        raise empty_prompt()


def empty_prompt() -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        "Invalid params: prompt needs at least one block.",
        {"field": "prompt"},
    )
