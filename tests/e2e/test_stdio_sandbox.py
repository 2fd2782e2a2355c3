"""The sandbox through the real server and the official ACP client: what `initialize` and a
new session say of it, a command the scripted model asks for that the sandbox stops (and
what the tool result tells the model), the session's choice and the operator's ceiling, and
a machine without bubblewrap (Landlock confines the commands), and one where nothing can
(stdio runs unconfined and says so; HTTP refuses to start)."""

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import IAC_CODE, Agent, Spawn, anthropic_env
from tests.support.hello_http import fetch, serving
from tests.support.raw_acp import NOTICES, raw_client
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e


def bash(command: str) -> object:
    return stream(tool_use("bash", {"command": command}, id="toolu_sh"), stop_reason="tool_use")


def values(options: Any) -> dict[str, str]:
    return {o.id: o.current_value for o in options}


def tool_result(server: ScriptedAnthropic, request: int) -> str:
    last = server.requests[request].messages[-1]
    [block] = [b for b in last["content"] if b["type"] == "tool_result"]
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def content(path: Path) -> str:
    return path.read_text()


async def start(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    return (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id


@pytest.fixture
def outside(workdir: Path) -> Path:
    """A file beside the session's directory, in no workspace."""
    path = workdir.parent / "outside.txt"
    path.write_text("untouched\n")
    return path


async def test_initialize_and_a_new_session_say_what_commands_run_in(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        init = await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
    meta = init.agent_capabilities.field_meta["iac_code"]["sandbox"]
    assert meta["mode"] == "custom" and meta["engine"] == "bubblewrap"
    assert meta["guarantees"] == {
        "fsIsolation": "workspace",
        "netIsolation": "denyAll",
        "processCaps": True,
    }
    assert meta["levels"] == ["read-only", "workspace-write", "off"]
    options = {o.id: o for o in session.config_options}
    assert options["sandbox"].current_value == "workspace-write"
    assert [c.value for c in options["sandbox"].options] == meta["levels"]
    assert options["network"].current_value == "none"


async def test_a_write_outside_the_workspace_is_stopped_and_the_model_is_told(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, outside: Path
) -> None:
    server.script(bash(f"echo x > {outside}; echo y > ../outside.txt"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        done = await agent.conn.prompt(session_id=sid, prompt=[text_block("write")])
    assert done.stop_reason == "end_turn"
    assert content(outside) == "untouched\n"
    told = tool_result(server, 1)
    assert "Read-only file system" in told
    assert "[sandbox]" in told and "a write outside what the sandbox allows" in told


async def test_the_session_may_turn_it_off_where_the_ceiling_allows(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, outside: Path
) -> None:
    server.script(bash(f"echo written > {outside}"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        answer = await agent.conn.set_config_option(
            config_id="sandbox", session_id=sid, value="off"
        )
        assert values(answer.config_options)["sandbox"] == "off"
        await agent.conn.prompt(session_id=sid, prompt=[text_block("write")])
    assert content(outside) == "written\n"
    assert "[sandbox]" not in tool_result(server, 1)


async def test_the_ceiling_refuses_more_naming_what_is_allowed(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    env = anthropic_env(server, IAC_CODE_SANDBOX_CEILING="workspace-write")
    async with spawn(env) as agent:
        sid = await start(agent, workdir)
        for config_id, value in (("sandbox", "off"), ("network", "full")):
            with pytest.raises(RequestError) as refused:
                await agent.conn.set_config_option(config_id=config_id, session_id=sid, value=value)
            assert refused.value.code == -32602
            assert value not in refused.value.data["allowed"]
        answer = await agent.conn.set_config_option(
            config_id="sandbox", session_id=sid, value="read-only"
        )
    assert values(answer.config_options)["sandbox"] == "read-only"


def no_bwrap(tmp_path: Path) -> str:
    """A PATH with the programs the server calls (git) but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("git",):
        found = subprocess.run(["which", name], capture_output=True, text=True, check=True)
        (bin_dir / name).symlink_to(found.stdout.strip())
    return str(bin_dir)


async def test_without_bubblewrap_commands_fall_back_to_landlock(
    spawn: Spawn, tmp_path: Path, workdir: Path, server: ScriptedAnthropic, outside: Path
) -> None:
    server.script(bash(f"echo x > {outside}"), stream(text("ok")))
    async with spawn(anthropic_env(server, PATH=no_bwrap(tmp_path))) as agent:
        agent.client.answers = ["allow_once"]
        init = await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("write")])
    meta = init.agent_capabilities.field_meta["iac_code"]["sandbox"]
    assert (meta["mode"], meta["engine"]) == ("custom", "landlock")
    assert content(outside) == "untouched\n"
    told = tool_result(server, 1)
    assert "Permission denied" in told and "[sandbox]" in told


async def test_with_no_engine_stdio_runs_unconfined_and_says_so(
    tmp_path: Path, workdir: Path
) -> None:
    env = {
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
        "IAC_CODE_PROVIDER": "demo",
        "PATH": no_bwrap(tmp_path),
        "IAC_CODE_SANDBOX_ENGINE": "bubblewrap",  # and no Landlock: nothing can confine
    }
    async with raw_client(env, workdir) as client:
        init = await client.call(
            "initialize", {"protocolVersion": 1, "clientCapabilities": NOTICES}
        )
        new = await client.call("session/new", {"cwd": str(workdir), "mcpServers": []})
        while not client.notices():
            await client.next_message()
    meta = init["result"]["agentCapabilities"]["_meta"]["iac_code"]["sandbox"]
    assert meta["mode"] == "host" and meta["levels"] == ["off"]
    options = {o["id"]: o for o in new["result"]["configOptions"]}
    assert [c["value"] for c in options["sandbox"]["options"]] == ["off"]
    [notice] = client.notices()
    assert notice["severity"] == "warning"
    assert "No sandbox here" in notice["title"]
    assert notice["_meta"]["iac_code"]["setupProblem"]["setting"] == "sandbox"


def test_with_no_engine_http_refuses_to_start(tmp_path: Path) -> None:
    env = {
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
        "IAC_CODE_PROVIDER": "demo",
        "PATH": no_bwrap(tmp_path),
        "HOME": os.environ.get("HOME", "/root"),
        "IAC_CODE_SANDBOX_ENGINE": "bubblewrap",
    }
    refused = subprocess.run(
        [IAC_CODE, "acp", "--transport", "http", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert refused.returncode == 2
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("iac-code: this machine cannot sandbox the agent's commands")
    assert "bubblewrap" in last and "IAC_CODE_SANDBOX=off" in last
    assert "Traceback" not in refused.stderr


async def test_the_user_may_let_one_command_out_of_the_sandbox_and_only_that_one(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, outside: Path
) -> None:
    server.script(
        bash(f"echo once >> {outside}"),
        stream(
            tool_use("bash", {"command": f"echo twice >> {outside}"}, id="toolu_again"),
            stop_reason="tool_use",
        ),
        stream(text("ok")),
    )
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once_unsandboxed", "allow_once"]
        sid = await start(agent, workdir)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("write twice")])
    (_, first), (_, second) = agent.client.permission_requests
    options = [(o.option_id, o.kind, o.name) for o in first]
    assert [o.option_id for o in second] == [o.option_id for o in first]
    assert options[:2] == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_once_unsandboxed", "allow_once", "Allow once, outside the sandbox"),
    ]
    assert content(outside) == "untouched\nonce\n"  # the first ran outside, the second not
    assert "[sandbox]" in tool_result(server, 2)


async def test_an_allowlist_lets_the_listed_host_through_and_names_the_refused(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    with serving("127.0.0.1") as listed, serving("127.0.0.2") as other:
        server.script(
            bash(f"{fetch(f'http://localhost:{listed}/')}; {fetch(f'http://127.0.0.2:{other}/')}"),
            stream(text("fetched")),
        )
        env = anthropic_env(server, IAC_CODE_SANDBOX_ALLOW=f"localhost:{listed}")
        async with spawn(env) as agent:
            agent.client.answers = ["allow_once"]
            sid = await start(agent, workdir)
            answer = await agent.conn.set_config_option(
                config_id="network", session_id=sid, value="allowlist"
            )
            assert values(answer.config_options)["network"] == "allowlist"
            await agent.conn.prompt(session_id=sid, prompt=[text_block("fetch")])
    told = tool_result(server, 1)
    assert "hello from 127.0.0.1" in told
    assert f"403 iac-code sandbox: 127.0.0.2:{other} is not on the sandbox's allow list" in told
