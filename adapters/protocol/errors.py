"""Application and domain errors to JSON-RPC errors: the one table for every transport."""

from adapters.protocol.jsonrpc import AUTH_REQUIRED, INTERNAL_ERROR, INVALID_PARAMS, RpcError
from application.errors import (
    ApplicationError,
    AuthRequired,
    InvalidCursor,
    ModelAuthFailed,
    ModelError,
    SessionBusy,
    SessionNotFound,
    StorageError,
)
from domain.errors import DomainError

_CODES: list[tuple[type[Exception], int]] = [
    (SessionNotFound, INVALID_PARAMS),
    (SessionBusy, INVALID_PARAMS),
    (InvalidCursor, INVALID_PARAMS),
    (AuthRequired, AUTH_REQUIRED),
    # The provider refused the key: the client can ask the user for another one.
    (ModelAuthFailed, AUTH_REQUIRED),
    (ModelError, INTERNAL_ERROR),
    (StorageError, INTERNAL_ERROR),
    (DomainError, INVALID_PARAMS),
]


def to_rpc_error(exc: ApplicationError | DomainError) -> RpcError:
    code = next((c for kind, c in _CODES if isinstance(exc, kind)), INTERNAL_ERROR)
    data = dict(exc.details)
    if isinstance(exc, ModelError):
        data["kind"] = exc.kind
        return RpcError(code, f"Model provider error: {exc}", data)
    return RpcError(code, str(exc), data or None)
