"""Our test MCP server (tests/support/mcp_server.py) as processes the tests start and stop."""

import subprocess
import sys
from pathlib import Path

from tests.support import children

ROOT = str(Path(__file__).resolve().parents[2])
SERVER = ("-m", "tests.support.mcp_server")


class McpServerProcesses:
    """Test MCP servers over http or sse, each its own process, stopped by `stop()`."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, transport: str, *options: str) -> str:
        """Start one; its URL, once it listens."""
        process = children.start(
            [sys.executable, *SERVER, "--transport", transport, *options],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.processes.append(process)
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # printed once it listens
        assert url.startswith("http://127.0.0.1:"), url
        return url

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
