"""Sign-in in a terminal, end to end: an editor that enables terminal auth is offered
`iac-code acp login`; run in a real pseudo-terminal it asks for a provider and a key (not
echoed), checks the key against the scripted provider and stores it with mode 0600; the
agent that kept running then authenticates with either method and prompts with that key.
After `iac-code logout`, a prompt is `auth_required` naming the methods. Every message is
checked against the newest schema file too."""

import asyncio
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AuthCapabilities, ClientCapabilities
from acp.transports import default_environment

from bootstrap.stored_keys import store_key
from tests.e2e.conftest import IAC_CODE, Agent, Spawn
from tests.support.schema_file import SchemaFileValidator, problems_with
from tests.support.scripted_anthropic import ScriptedAnthropic, auth_failed, stream, text
from tests.support.terminal import Terminal

pytestmark = pytest.mark.e2e

KEY = "sk-ant-pasted-7f3a9c"
TERMINAL_AUTH = ClientCapabilities(auth=AuthCapabilities(terminal=True))


def _env(server: ScriptedAnthropic) -> dict[str, str]:
    """The anthropic provider at the scripted server, with no key anywhere."""
    return {
        "IAC_CODE_PROVIDER": "anthropic",
        "IAC_CODE_BASE_URL": server.base_url,
        "IAC_CODE_MODEL": "claude-test",
        "IAC_CODE_MAX_RETRIES": "0",
    }


def _sign_in(argv: list[str], env: dict[str, str], cwd: Path, key: str = KEY) -> tuple[int, str]:
    """A person at the terminal: takes the offered provider, pastes the key."""
    terminal = Terminal(argv, env, cwd)
    terminal.expect("Provider [1]: ")  # the provider the agent serves is the default
    assert "1) Anthropic" in terminal.screen
    terminal.type("")
    terminal.expect("(it is not shown): ")
    terminal.type(key)
    terminal.expect("readable by you only")
    return terminal.exit_code(), terminal.screen


def _assert_schema_clean(agent: Agent) -> None:
    """Every message against schema.json; errors (which it leaves alone) as `Error`."""
    validator = SchemaFileValidator(which="stable")
    for sender, message in agent.raw:
        validator.check(sender, message)
        if "error" in message:
            assert problems_with("Error", message["error"]) == [], message
    validator.assert_clean()


def _auth_error(caught: pytest.ExceptionInfo[RequestError]) -> dict[str, Any]:
    assert caught.value.code == -32000
    data: dict[str, Any] = caught.value.data
    return data


async def test_terminal_sign_in_then_authenticate_and_prompt_without_a_restart(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, base_env: dict[str, str]
) -> None:
    server.accept_keys(KEY)
    server.script(stream(text("Signed in.")))
    env = _env(server)
    async with spawn(env) as agent:
        init = await agent.initialize(TERMINAL_AUTH)
        key_method, terminal_method = init.auth_methods
        assert (key_method.id, terminal_method.id) == ("api-key", "terminal-login")
        assert terminal_method.type == "terminal"
        with pytest.raises(RequestError) as no_key:
            await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert _auth_error(no_key)["authMethods"] == ["api-key", "terminal-login"]
        with pytest.raises(RequestError) as too_soon:
            await agent.conn.authenticate(method_id="api-key")
        assert "iac-code login" in str(too_soon.value)

        # What the editor runs: the agent's own command with the method's args appended.
        argv = [IAC_CODE, "acp", *terminal_method.args]
        code, screen = await asyncio.to_thread(
            _sign_in, argv, {**default_environment(), **base_env, **env}, workdir
        )
        assert code == 0, screen
        assert KEY not in screen  # not echoed
        assert [server.sent_key(h) for h in server.model_listings] == [KEY]  # checked once
        config = Path(base_env["IAC_CODE_CONFIG_DIR"]) / "config.toml"
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        assert tomllib.loads(config.read_text())["providers"]["anthropic"] == {"api_key": KEY}

        for method in ("api-key", "terminal-login"):  # each offered method succeeds now
            assert await agent.conn.authenticate(method_id=method) is not None
        # The agent answers this one itself (it served session/new); the first came from
        # the early path unless the agent had loaded already: the two must be equal.
        assert await agent.initialize(TERMINAL_AUTH) == init
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(
            session_id=session.session_id, prompt=[text_block("hello")]
        )
    assert result.stop_reason == "end_turn"
    assert agent.client.agent_text() == "Signed in."
    assert server.sent_key(server.last_request) == KEY
    _assert_schema_clean(agent)


async def test_after_logout_a_prompt_is_auth_required_naming_the_methods(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, base_env: dict[str, str]
) -> None:
    server.accept_keys(KEY)
    env = _env(server)
    cli_env = {**default_environment(), **base_env, **env}
    login = await asyncio.to_thread(_sign_in, [IAC_CODE, "login"], cli_env, workdir)
    assert login[0] == 0, login[1]
    server.script(stream(text("First.")))
    async with spawn(env) as agent:
        await agent.initialize(TERMINAL_AUTH)
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("one")])
    _assert_schema_clean(agent)

    logout = await asyncio.to_thread(
        subprocess.run,
        [IAC_CODE, "logout"],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert logout.returncode == 0, logout.stderr
    assert "Removed the Anthropic key" in logout.stdout

    async with spawn(env) as agent:
        await agent.initialize(TERMINAL_AUTH)
        await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        with pytest.raises(RequestError) as caught:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("two")])
        data = _auth_error(caught)
        assert data["authMethods"] == ["api-key", "terminal-login"]
        assert "iac-code login" in str(caught.value)
    assert len(server.requests) == 1  # the second prompt never reached the provider
    _assert_schema_clean(agent)


async def test_a_key_the_provider_refuses_is_replaced_by_signing_in_again(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, base_env: dict[str, str]
) -> None:
    store_key(Path(base_env["IAC_CODE_CONFIG_DIR"]), "anthropic", "sk-ant-expired")
    server.accept_keys(KEY)
    server.script(auth_failed(), stream(text("Back.")))
    env = _env(server)
    async with spawn(env) as agent:
        init = await agent.initialize(TERMINAL_AUTH)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as refused:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("one")])
        assert _auth_error(refused)["authMethods"] == ["api-key", "terminal-login"]

        argv = [IAC_CODE, "acp", *init.auth_methods[1].args]
        cli_env = {**default_environment(), **base_env, **env}
        code, screen = await asyncio.to_thread(_sign_in, argv, cli_env, workdir)
        assert code == 0, screen
        await agent.conn.authenticate(method_id="api-key")
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("two")])
    assert result.stop_reason == "end_turn"
    assert [server.sent_key(r) for r in server.requests] == ["sk-ant-expired", KEY]
    _assert_schema_clean(agent)
