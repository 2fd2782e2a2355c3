"""`authenticate` and `logout`, and the sign-in methods an auth-required error names.

Every method `initialize` offered can succeed: `authenticate` asks for the provider's key,
which the model client looks for again in config.toml when the file changed, so a key that
`iac-code login` stored after the server started is taken without a restart."""

from collections.abc import Callable
from typing import Any

from acp import schema as acp

from adapters.acp_v1.auth_methods import API_KEY_METHOD
from adapters.acp_v1.wire import dump
from adapters.protocol.jsonrpc import AUTH_REQUIRED, INVALID_PARAMS, RpcError


def authenticate(
    request: acp.AuthenticateRequest,
    offered: list[str],
    has_credentials: Callable[[], bool],
    key_variable: str,
) -> dict[str, Any]:
    """`offered`: the method ids this connection was told of in `initialize`."""
    # `api-key` also for a provider that takes no key (nothing is offered then): it succeeds.
    if request.method_id not in {API_KEY_METHOD, *offered}:
        raise RpcError(
            INVALID_PARAMS,
            f"Unknown authentication method {request.method_id!r}.",
            {"field": "methodId", "available": offered or [API_KEY_METHOD]},
        )
    if not has_credentials():
        raise RpcError(
            AUTH_REQUIRED,
            f"No API key is configured yet: run `iac-code login` (or start the agent with "
            f"{key_variable} set), then authenticate again.",
            {"methodId": request.method_id, "authMethods": offered or [API_KEY_METHOD]},
        )
    return dump(acp.AuthenticateResponse())


def naming_sign_in(error: RpcError, offered: list[str]) -> RpcError:
    """An auth-required error with the ids of the methods that sign in (`authMethods`),
    as this connection was offered them; any other error as it is."""
    if error.code != AUTH_REQUIRED or not offered:
        return error
    data = dict(error.data) if isinstance(error.data, dict) else {}
    data.setdefault("methodId", offered[0])
    data["authMethods"] = offered
    return RpcError(error.code, error.message, data)


def logout() -> dict[str, Any]:
    """Forget what this connection's `authenticate` established: nothing, today. The key
    is the server's (its environment, or config.toml), not the client's: it stays, and
    requests that need it keep working, or keep answering auth-required when the server
    has none, exactly as before `authenticate`. `iac-code logout` removes a stored key."""
    return dump(acp.LogoutResponse())
