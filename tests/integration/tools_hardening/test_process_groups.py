"""Regression tests for hardening finding 3: bash process groups die with the server."""

import asyncio
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from adapters.tools.runner import LocalToolRunner
from adapters.workspace.processes import group_alive, live_launchers, stop_all_process_groups
from tests.integration.tools_hardening.support import (
    ROOT,
    ctx,
    nothing,
    poll,
)

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def test_finding_3_bash_group_dies_when_the_server_is_sigkilled(tmp_path: Path) -> None:
    pids, marker = tmp_path / "pids", tmp_path / "marker"
    command = f"sleep 300 & echo $$ $! > {pids}; sleep 20; touch {marker}"
    script = textwrap.dedent(
        f"""
        import asyncio
        from adapters.tools.base import Limits
        from adapters.tools.runner import LocalToolRunner
        from adapters.workspace.local import LocalWorkspace
        from application.ports.tools import ToolContext

        async def main():
            async def nothing(chunk): pass
            await LocalToolRunner(Limits(), LocalWorkspace()).run(
                "bash", {{"command": {command!r}}}, ToolContext(cwd={str(tmp_path)!r}, model="m"),
                nothing,
            )

        asyncio.run(main())
        """
    )
    server = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)  # noqa: ASYNC220
    try:
        assert await poll(lambda: pids.exists() and len(pids.read_text().split()) == 2)
        shell, child = (int(p) for p in pids.read_text().split())
        assert _alive(shell) and _alive(child)
        server.send_signal(signal.SIGKILL)
        server.wait()
        assert await poll(lambda: not group_alive(shell)), "the command outlived the server"
        assert not _alive(shell) and not _alive(child)
        assert not marker.exists()
    finally:
        server.kill()
        server.wait()


async def test_finding_3_stop_all_process_groups_kills_running_commands(
    runner: LocalToolRunner, project: Path
) -> None:
    pid_file = project / "bg.pid"
    running = asyncio.create_task(
        runner.run(
            "bash",
            {"command": f"sleep 300 & echo $! > {pid_file}; wait"},
            ctx(project),
            nothing,
        )
    )
    # The command may write its pid before the runner has registered its launcher (the
    # child runs as soon as it is spawned): wait for both.
    assert await poll(
        lambda: pid_file.exists() and pid_file.read_text().strip() != "" and live_launchers() >= 1
    )
    assert stop_all_process_groups() >= 1
    result = await asyncio.wait_for(running, 60)  # a bound against hanging, not a timing check
    assert result.is_error
    assert result.raw_output["exitCode"] == -signal.SIGKILL
    assert not _alive(int(pid_file.read_text()))
    assert stop_all_process_groups() == 0  # the finished command's group was forgotten
