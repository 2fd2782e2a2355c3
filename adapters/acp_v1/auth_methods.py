"""The sign-in methods `initialize` offers, as plain JSON (this module stays light: it
answers before the heavy imports).

- `api-key` (the agent type, no `type` field): `authenticate` succeeds once the provider's
  key is configured (its variable, or config.toml, which `iac-code login` writes and a
  running server looks at again when it changes).
- `terminal-login` (type `terminal`), only for a client that sent
  `clientCapabilities.auth.terminal`: the client appends `args` to the command it starts
  the agent with (`iac-code acp login`) and runs it in a terminal; a zero exit means the
  key is stored. The schema says a client does not pass it to `authenticate`; one that
  does is answered as for `api-key`, so every advertised method can succeed.
"""

from typing import Any

from application.handshake.server_info import ServerInfo

API_KEY_METHOD = "api-key"
TERMINAL_METHOD = "terminal-login"
LOGIN_ARGS = ("login",)


def terminal_enabled(client_capabilities: object) -> bool:
    """`clientCapabilities.auth.terminal` is `true` (anything else means off, as the
    schema's default)."""
    if not isinstance(client_capabilities, dict):
        return False
    auth = client_capabilities.get("auth")
    return isinstance(auth, dict) and auth.get("terminal") is True


def auth_methods(info: ServerInfo, client_capabilities: object) -> list[dict[str, Any]]:
    """What this client is offered: nothing for a provider that takes no key."""
    if not info.takes_key:
        return []
    methods = [_api_key(info)]
    if terminal_enabled(client_capabilities):
        methods.append(_terminal(info))
    return methods


def method_ids(info: ServerInfo, client_capabilities: object) -> list[str]:
    return [str(m["id"]) for m in auth_methods(info, client_capabilities)]


def _api_key(info: ServerInfo) -> dict[str, Any]:
    where = f" Get one at {info.key_link}." if info.key_link else ""
    return {
        "id": API_KEY_METHOD,
        "name": f"{info.provider_name} API key",
        "description": f"Set {info.key_variable} (IAC_CODE_API_KEY works for any provider) "
        f"or run `iac-code login`, then authenticate.{where}",
    }


def _terminal(info: ServerInfo) -> dict[str, Any]:
    return {
        "type": "terminal",
        "id": TERMINAL_METHOD,
        "name": "Sign in in a terminal",
        "description": f"Choose a provider ({info.provider_name} serves now) and paste its "
        "API key: it is checked and stored in config.toml, readable by you only.",
        "args": list(LOGIN_ARGS),
    }
