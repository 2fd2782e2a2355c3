"""`initialize`, answered before the heavy modules load. The result is built as plain JSON;
a test checks it against the SDK's InitializeResponse model."""

from collections.abc import Callable
from typing import Any

from adapters.acp_v1.auth_methods import auth_methods
from adapters.acp_v1.methods import advertised
from adapters.acp_v1.sandbox_meta import sandbox_capability
from adapters.protocol.connection import Connection
from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from application.handshake.initialize import Initialize
from application.handshake.server_info import ServerInfo

# What works today: derived from the routed methods (methods.py).
_ADVERTISED = advertised()
SESSION_CAPABILITIES: dict[str, dict[str, Any]] = _ADVERTISED["sessionCapabilities"]


MAX_PROTOCOL_VERSION = 2**16 - 1  # the schema's ProtocolVersion: an unsigned 16-bit integer


def requested_version(params: dict[str, Any] | None) -> int:
    """The client's protocolVersion; anything but a uint16 is refused, naming the field (any
    valid version is answered with ours, as the negotiation says)."""
    value = (params or {}).get("protocolVersion")
    if value is None:
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: protocolVersion is required.",
            {"field": "protocolVersion", "method": "initialize"},
        )
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= MAX_PROTOCOL_VERSION
    ):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: protocolVersion must be an integer from 0 to 65535.",
            {
                "field": "protocolVersion",
                "method": "initialize",
                "received": value if isinstance(value, int | float) else type(value).__name__,
            },
        )
    return value


def _meta(info: ServerInfo) -> dict[str, Any]:
    meta: dict[str, Any] = _ADVERTISED["_meta"]
    if info.sandbox is None:
        return meta
    ours = {**meta.get("iac_code", {}), "sandbox": sandbox_capability(info.sandbox)}
    return {**meta, "iac_code": ours}


def initialize_result(info: ServerInfo, client_capabilities: object = None) -> dict[str, Any]:
    return {
        "protocolVersion": info.protocol_version,
        "agentCapabilities": {
            "loadSession": _ADVERTISED["loadSession"],
            # Audio is accepted but reaches the model as a text marker only.
            "promptCapabilities": {
                "image": info.images,  # as the default model reads them
                "audio": False,
                "embeddedContext": True,
            },
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": SESSION_CAPABILITIES,
            "auth": _ADVERTISED["auth"],
            # Extensions live under _meta, as ACP asks.
            "_meta": _meta(info),
        },
        "agentInfo": {"name": info.name, "title": info.title, "version": info.version},
        # The same for the early answer and the agent's: both are built here.
        "authMethods": auth_methods(info, client_capabilities),
    }


def handle_initialize(
    use_case: Initialize, params: dict[str, Any] | None, peer: Connection | None = None
) -> dict[str, Any]:
    capabilities = (params or {}).get("clientCapabilities")
    capabilities = capabilities if isinstance(capabilities, dict) else None
    result = initialize_result(use_case.execute(requested_version(params)), capabilities)
    if peer is not None:
        # What this client can do for us (its files, its terminals), kept per connection.
        peer.client_capabilities = capabilities
        info = (params or {}).get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        peer.client_name = name[:80] if isinstance(name, str) and name.strip() else None
    return result


def initialize_answer(
    use_case: Initialize,
) -> Callable[[dict[str, Any] | None, Connection], dict[str, Any]]:
    """`initialize` answered with `use_case`, as the lazy dispatcher takes it."""

    def answer(params: dict[str, Any] | None, peer: Connection) -> dict[str, Any]:
        return handle_initialize(use_case, params, peer)

    return answer
