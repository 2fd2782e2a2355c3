"""Application and domain errors to JSON-RPC errors: the one table for every transport."""

from collections.abc import Awaitable
from typing import Any

from adapters.protocol.jsonrpc import AUTH_REQUIRED, INTERNAL_ERROR, INVALID_PARAMS, RpcError
from application.attachments.ownership import NotAttached
from application.errors import (
    AuthRequired,
    ChildSessionReadOnly,
    InvalidCursor,
    ModelAuthFailed,
    ModelError,
    RestoreDeclined,
    RestoreRefused,
    RewindConflict,
    RewindNotUndoable,
    SessionBusy,
    SessionNotFound,
    StorageError,
    WorktreeRefused,
)
from domain.errors import DetailedError, DomainError

_CODES: list[tuple[type[Exception], int]] = [
    (SessionNotFound, INVALID_PARAMS),
    (SessionBusy, INVALID_PARAMS),
    (InvalidCursor, INVALID_PARAMS),
    (ChildSessionReadOnly, INVALID_PARAMS),
    (RewindNotUndoable, INVALID_PARAMS),
    (RewindConflict, INVALID_PARAMS),
    (RestoreRefused, INVALID_PARAMS),
    (RestoreDeclined, INVALID_PARAMS),
    (WorktreeRefused, INVALID_PARAMS),
    (AuthRequired, AUTH_REQUIRED),
    # The provider refused the key: the client can ask the user for another one.
    (ModelAuthFailed, AUTH_REQUIRED),
    (ModelError, INTERNAL_ERROR),
    (StorageError, INTERNAL_ERROR),
    (DomainError, INVALID_PARAMS),
]


def to_rpc_error(exc: DetailedError) -> RpcError:
    code = next((c for kind, c in _CODES if isinstance(exc, kind)), INTERNAL_ERROR)
    data = dict(exc.details)
    if isinstance(exc, ModelError):
        data["kind"] = exc.kind
        return RpcError(code, f"Model provider error: {exc}", data)
    return RpcError(code, str(exc), data or None)


async def mapped(handling: Awaitable[Any]) -> Any:
    """A handler's result, its errors as JSON-RPC errors."""
    try:
        return await handling
    except NotAttached as exc:
        raise not_open_here(str(exc)) from exc
    except DetailedError as exc:
        raise to_rpc_error(exc) from exc


def not_open_here(session_id: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        f"Session {session_id!r} is not open on this connection: load or resume it here first.",
        {"sessionId": session_id},
    )


def being_closed(session_id: str) -> RpcError:
    return to_rpc_error(
        SessionNotFound(f"Session {session_id!r} is being closed.", sessionId=session_id)
    )


def running_elsewhere(session_id: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        f"Session {session_id!r} is running a prompt on another connection.",
        {"sessionId": session_id},
    )
