"""The method table and the advertised capabilities come from one list: nothing advertised
is unrouted, and nothing routed that has a capability is unadvertised."""

from typing import Any

from acp import schema as acp

from adapters.acp_v1.agent import AcpAgent
from adapters.acp_v1.handshake import initialize_result
from adapters.acp_v1.methods import ALIASES, METHODS
from adapters.acp_v1.rendering import V1Rendering
from adapters.protocol.channels import SessionChannels
from application.attachments.room import Attachments
from application.handshake.server_info import ServerInfo


def _agent() -> AcpAgent:
    room = Attachments(close=None, busy=None)  # type: ignore[arg-type]
    return AcpAgent(use_cases=None, room=room, channels=SessionChannels(room, V1Rendering()))  # type: ignore[arg-type]


def _capabilities() -> dict[str, Any]:
    info = ServerInfo(
        protocol_version=1,
        name="iac-code",
        title="iac-code",
        version="0",
        images=True,
        takes_key=False,
        provider_name="demo",
        key_variable="IAC_CODE_API_KEY",
        key_link=None,
    )
    return initialize_result(info)["agentCapabilities"]


def _lookup(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def test_every_routed_capability_is_advertised_with_its_value() -> None:
    advertised = _capabilities()
    for method, route in _agent().routes.items():
        for path, value in route.capabilities:
            assert _lookup(advertised, path) == value, method


def test_nothing_is_advertised_that_no_routed_method_stands_for() -> None:
    advertised = _capabilities()
    claimed = {path for route in _agent().routes.values() for path, _ in route.capabilities}
    # Capabilities of the baseline methods (prompt content, MCP transports) name no method.
    method_groups = ("sessionCapabilities", "auth")
    for group in method_groups:
        for key in advertised[group]:
            assert (group, key) in claimed, f"{group}.{key} is advertised but not routed"
    assert ("loadSession",) in claimed
    for key in advertised["_meta"]["iac_code"]:
        assert ("_meta", "iac_code", key) in claimed


def test_the_table_routes_exactly_the_listed_methods_and_the_aliases_resolve() -> None:
    routes = _agent().routes
    assert set(routes) == set(METHODS)
    assert all(target in routes for target in ALIASES.values())


def test_each_routes_model_is_the_sdks_model_for_its_method() -> None:
    """The params model of each official method is the SDK's (None: read by hand)."""
    official = {
        "authenticate": acp.AuthenticateRequest,
        "session/new": acp.NewSessionRequest,
        "session/load": acp.LoadSessionRequest,
        "session/prompt": acp.PromptRequest,
        "session/list": acp.ListSessionsRequest,
        "session/resume": acp.ResumeSessionRequest,
        "session/close": acp.CloseSessionRequest,
    }
    routes = _agent().routes
    for method, model in official.items():
        assert routes[method].params is model
