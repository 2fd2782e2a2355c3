"""Regression tests of issue 25 about the processes the bash tool starts, through the real
server: they cannot read the server's memory (finding 2), and none of them outlives its
command, however it left the command's process group (finding 3)."""

import asyncio
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.processes import survivors
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

PROBE = Path(__file__).resolve().parents[1] / "support" / "memory_probe.py"
KEY = "sk-test-secret"  # anthropic_env's key: what the server holds in its heap


async def start(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    return (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id


def bash(command: str, **extra: object) -> object:
    return stream(
        tool_use("bash", {"command": command, **extra}, id="toolu_sh"), stop_reason="tool_use"
    )


async def poll(condition: Callable[[], bool], bound: float = 60.0) -> bool:
    """True as soon as `condition` holds; False if it still does not after `bound` seconds
    (a backstop against hanging, not what is measured)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


# --- Finding 2: the server's memory is out of the tools' reach ---------------------------


async def probe_the_server(spawn: Spawn, workdir: Path, server: ScriptedAnthropic) -> dict:
    """Run memory_probe.py from a bash tool against the real server; what it found."""
    pid_file, result = workdir / "server.pid", workdir / "probe.json"
    command = (
        f"until [ -s {pid_file} ]; do sleep 0.05; done; "
        f"{sys.executable} {PROBE} $(cat {pid_file}) {KEY[::-1]} > {result}"
    )
    server.script(bash(command), stream(text("probed")))
    # Unconfined: what is tested is the launcher's own guard, which holds without a
    # sandbox too (a sandboxed command does not even see the server: test_escapes.py).
    async with spawn(anthropic_env(server, IAC_CODE_SANDBOX="off")) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        pid_file.write_text(str(agent.process.pid))
        done = await agent.conn.prompt(session_id=sid, prompt=[text_block("probe")])
    assert done.stop_reason == "end_turn"
    return json.loads(result.read_text())


async def test_finding_2_a_bash_tool_cannot_read_the_servers_memory_or_fds(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    found = await probe_the_server(spawn, workdir, server)
    assert found["self_mem"] == "read"  # the probe's way of reading works...
    # ...but not on the server, though the tool runs as the same user (root here: its
    # CAP_SYS_PTRACE was dropped too).
    assert found["mem"] == "PermissionError" and found["mem_found"] is False
    assert found["process_vm_readv"] == "PermissionError"
    assert found["fd"] == "PermissionError"
    # Root may still read the environment block of a non-dumpable process (the kernel asks
    # less for it than for its memory); the server re-executed itself without its keys in it.
    assert found["environ"] == "PermissionError" or found["environ_found"] is False
    if os.getuid() != 0:
        assert found["environ"] == "PermissionError"


# --- Finding 3: nothing a command starts outlives it --------------------------------------


def escapes(marker: str) -> str:
    """Three processes leaving the command's process group, each named `<marker>-...` (argv
    0, which no other process's command line starts with), then a wait until all three run."""
    return (
        f"setsid bash -c 'exec -a {marker}-setsid sleep 1000' & "
        f"( exec -a {marker}-double-fork sleep 1000 & ) & "
        f"nohup bash -c 'exec -a {marker}-nohup sleep 1000' >/dev/null 2>&1 & "
        f"until [ \"$(pgrep -cf '^{marker}-')\" = 3 ]; do sleep 0.05; done; echo all-started; "
    )


@pytest.fixture
def marker() -> Iterator[str]:
    name = f"iac-probe-{uuid.uuid4().hex[:12]}"
    yield name
    for pid in survivors(name):  # the machine is shared: leave nothing behind, even failing
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


async def test_finding_3_setsid_double_fork_and_nohup_end_with_the_command(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(bash(escapes(marker)), stream(text("done")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        done = await agent.conn.prompt(session_id=sid, prompt=[text_block("run")])
        assert done.stop_reason == "end_turn"
        assert "all-started" in str(server.requests[1].messages[-1])
        assert survivors(marker) == []  # at once: the result comes once the tree is gone


async def running(agent: Agent, workdir: Path, marker: str) -> "tuple[str, asyncio.Task]":
    agent.client.answers = ["allow_once"]
    sid = await start(agent, workdir)
    prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("run")]))
    assert await poll(lambda: len(survivors(marker)) == 3), agent.stderr()
    return sid, prompt


async def test_finding_3_setsid_double_fork_and_nohup_end_on_cancel(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(bash(escapes(marker) + "sleep 1000"), stream(text("after")))
    async with spawn(anthropic_env(server)) as agent:
        sid, prompt = await running(agent, workdir, marker)
        await agent.conn.cancel(session_id=sid)
        assert (await prompt).stop_reason == "cancelled"
        assert await poll(lambda: survivors(marker) == [])


async def test_finding_3_setsid_double_fork_and_nohup_end_on_timeout(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    # 8 s: long enough for the three to start on a loaded machine (the output says they
    # did), and then it runs out.
    server.script(bash(escapes(marker) + "sleep 1000", timeout=8), stream(text("after")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        done = await agent.conn.prompt(session_id=sid, prompt=[text_block("run")])
        assert done.stop_reason == "end_turn"
        result = str(server.requests[1].messages[-1])
        assert "all-started" in result and "Timed out" in result
        assert survivors(marker) == []


async def test_finding_3_setsid_double_fork_and_nohup_end_when_the_session_closes(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(bash(escapes(marker) + "sleep 1000"))
    async with spawn(anthropic_env(server)) as agent:
        sid, prompt = await running(agent, workdir, marker)
        await agent.conn.close_session(session_id=sid)
        await asyncio.gather(prompt, return_exceptions=True)
        assert await poll(lambda: survivors(marker) == [])


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM", "SIGKILL"])
async def test_finding_3_setsid_double_fork_and_nohup_end_when_the_server_exits(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str, how: str
) -> None:
    server.script(bash(escapes(marker) + "sleep 1000"))
    async with spawn(anthropic_env(server)) as agent:
        _, prompt = await running(agent, workdir, marker)
        agent.killed = True  # the prompt stays unanswered: the server is going away
        if how == "SIGKILL":
            agent.kill()
        elif how == "SIGTERM":
            agent.process.send_signal(signal.SIGTERM)
        else:
            agent.process.stdin.close()
        await asyncio.wait_for(agent.process.wait(), 60)
        prompt.cancel()
        await asyncio.gather(prompt, return_exceptions=True)
    assert await poll(lambda: survivors(marker) == [])
