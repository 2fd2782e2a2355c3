"""The sign-in methods `initialize` offers and what `authenticate` does with each, checked
against the newest schema file (the pinned SDK still has the removed `env_var` type)."""

from typing import Any

import pytest
from acp import schema as acp

from adapters.acp_v1.auth import authenticate, naming_sign_in
from adapters.acp_v1.handshake import initialize_result
from adapters.protocol.jsonrpc import AUTH_REQUIRED, INVALID_PARAMS, RpcError
from application.handshake.server_info import ServerInfo
from tests.support.schema_file import problems_with, schema

TERMINAL = {"auth": {"terminal": True}}


def _info(*, takes_key: bool = True) -> ServerInfo:
    return ServerInfo(
        protocol_version=1,
        name="iac-code",
        title="iac-code",
        version="0",
        takes_key=takes_key,
        provider_name="Anthropic",
        key_variable="ANTHROPIC_API_KEY",
        key_link="https://console.anthropic.com/settings/keys",
    )


def _methods(capabilities: Any, *, takes_key: bool = True) -> list[dict[str, Any]]:
    result = initialize_result(_info(takes_key=takes_key), capabilities)
    assert problems_with("InitializeResponse", result) == []
    methods: list[dict[str, Any]] = result["authMethods"]
    return methods


def test_the_newest_schema_has_no_env_var_method_and_neither_do_we() -> None:
    variants = schema()["$defs"]["AuthMethod"]["anyOf"]
    assert "env_var" not in str(variants)
    for capabilities in (None, TERMINAL):
        assert all(m.get("type") in (None, "terminal") for m in _methods(capabilities))


def test_without_terminal_auth_only_the_key_method_is_offered() -> None:
    for capabilities in (None, {}, {"auth": {}}, {"auth": {"terminal": False}}, {"auth": 1}):
        (method,) = _methods(capabilities)
        assert method["id"] == "api-key"
        assert "type" not in method  # the agent type: authenticate handles it
        assert "ANTHROPIC_API_KEY" in method["description"]
        assert "iac-code login" in method["description"]


def test_a_client_with_terminal_auth_is_offered_iac_code_login_too() -> None:
    key, terminal = _methods(TERMINAL)
    assert key["id"] == "api-key"
    assert terminal["type"] == "terminal"
    assert terminal["id"] == "terminal-login"
    assert terminal["args"] == ["login"]  # appended to `iac-code acp`: `iac-code acp login`
    assert problems_with("AuthMethodTerminal", terminal) == []


def test_a_provider_that_takes_no_key_offers_nothing_to_sign_in_with() -> None:
    assert _methods(TERMINAL, takes_key=False) == []


def signing_in(method_id: str) -> acp.AuthenticateRequest:
    """`authenticate`'s params, as the dispatcher reads them."""
    return acp.AuthenticateRequest.model_validate({"methodId": method_id})


@pytest.mark.parametrize("method_id", ["api-key", "terminal-login"])
def test_each_offered_method_succeeds_once_a_key_is_there(method_id: str) -> None:
    offered = ["api-key", "terminal-login"]
    result = authenticate(signing_in(method_id), offered, lambda: True, "ANTHROPIC_API_KEY")
    assert result == {}
    assert problems_with("AuthenticateResponse", result) == []


def test_without_a_key_authenticate_is_auth_required_naming_the_methods() -> None:
    with pytest.raises(RpcError) as caught:
        authenticate(signing_in("api-key"), ["api-key"], lambda: False, "ANTHROPIC_API_KEY")
    error = caught.value
    assert error.code == AUTH_REQUIRED
    assert error.data == {"methodId": "api-key", "authMethods": ["api-key"]}
    assert "iac-code login" in error.message
    assert problems_with("Error", error.to_json()) == []


def test_a_method_not_offered_to_this_client_is_invalid_params() -> None:
    with pytest.raises(RpcError) as caught:
        authenticate(signing_in("terminal-login"), ["api-key"], lambda: True, "K")
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.data == {"field": "methodId", "available": ["api-key"]}


def test_auth_required_errors_name_the_offered_methods_and_others_pass_unchanged() -> None:
    offered = ["api-key", "terminal-login"]
    named = naming_sign_in(RpcError(AUTH_REQUIRED, "No key.", {"methodId": "api-key"}), offered)
    assert named.data == {"methodId": "api-key", "authMethods": offered}
    other = RpcError(INVALID_PARAMS, "Bad.", {"field": "x"})
    assert naming_sign_in(other, offered) is other
    bare = RpcError(AUTH_REQUIRED, "No key.")
    assert naming_sign_in(bare, []) is bare
