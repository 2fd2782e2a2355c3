"""`authenticate` and `logout`: the one method is the key the server was started with."""

from collections.abc import Callable
from typing import Any

from acp import schema as acp

from adapters.protocol import wire
from adapters.protocol.handshake import API_KEY_METHOD
from adapters.protocol.jsonrpc import AUTH_REQUIRED, INVALID_PARAMS, RpcError
from adapters.protocol.params import parse_params


def authenticate(
    params: dict[str, Any] | None, has_credentials: Callable[[], bool], key_variable: str
) -> dict[str, Any]:
    request = parse_params(acp.AuthenticateRequest, params, "authenticate")
    if request.method_id != API_KEY_METHOD:
        raise RpcError(
            INVALID_PARAMS,
            f"Unknown authentication method {request.method_id!r}.",
            {"field": "methodId", "available": [API_KEY_METHOD]},
        )
    if not has_credentials():
        raise RpcError(
            AUTH_REQUIRED,
            f"No API key found: start the agent with {key_variable} (or IAC_CODE_API_KEY) set.",
            {"methodId": API_KEY_METHOD},
        )
    return wire.dump(acp.AuthenticateResponse())


def logout(params: dict[str, Any] | None) -> dict[str, Any]:
    """Forget what this connection's `authenticate` established: nothing, today. The only
    method checks the key the server was started with, which is the server's, not the
    client's: it stays, and requests that need it keep working, or keep answering
    auth-required when the server has none, exactly as before `authenticate`."""
    parse_params(acp.LogoutRequest, params, "logout")
    return wire.dump(acp.LogoutResponse())
