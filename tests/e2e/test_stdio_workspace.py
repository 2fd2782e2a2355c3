"""An editor that lends its files (fs) and terminals (terminal): the real process, the
official client, the real SDK. Without them, the tools stay local (test_stdio_tools.py)."""

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.e2e.conftest import RecordingClient, Spawn, anthropic_env, until
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
TERMINAL = ClientCapabilities(terminal=True)


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytes = b""
    reader: "asyncio.Task[None] | None" = None


@dataclass
class EditorClient(RecordingClient):
    """An editor with unsaved buffers and real terminals (bash processes it runs itself)."""

    buffers: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    terminals: dict[str, _Terminal] = field(default_factory=dict)

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", {"path": path, "line": line, "limit": limit}))
        lines = self.buffers[path].splitlines(keepends=True)
        first = (line or 1) - 1
        return ReadTextFileResponse(
            content="".join(lines[first : None if limit is None else first + limit])
        )

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.calls.append(("fs/write_text_file", {"path": path, "content": content}))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: Any = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self.calls.append(("terminal/create", {"command": command, "args": args, "cwd": cwd}))
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = _Terminal(process)
        terminal.reader = asyncio.ensure_future(self._read(terminal))
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _read(self, terminal: _Terminal) -> None:
        assert terminal.process.stdout is not None
        while chunk := await terminal.process.stdout.read(4096):
            terminal.output += chunk

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("terminal/wait_for_exit", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        assert terminal.reader is not None
        await terminal.reader
        return WaitForTerminalExitResponse(exit_code=code)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("terminal/output", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        code = terminal.process.returncode
        return TerminalOutputResponse(
            output=terminal.output.decode(),
            truncated=False,
            exit_status=None if code is None else TerminalExitStatus(exit_code=code),
        )

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.calls.append(("terminal/kill", {"terminalId": terminal_id}))
        with contextlib.suppress(ProcessLookupError):
            self.terminals[terminal_id].process.kill()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("terminal/release", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            terminal.process.kill()
        await terminal.process.wait()
        return ReleaseTerminalResponse()


def calls(*parts: Any) -> Any:
    return stream(*parts, stop_reason="tool_use")


def tool_results(server: ScriptedAnthropic, request: int) -> list[dict[str, Any]]:
    last = server.requests[request].messages[-1]
    return [b for b in last["content"] if b["type"] == "tool_result"]


async def test_files_are_read_and_written_through_the_editor(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "a.txt").write_text("saved on disk\n")
    editor = EditorClient(answers=["allow_once"])
    editor.buffers[str(workdir / "a.txt")] = "unsaved in the editor\n"
    server.script(
        calls(tool_use("read_file", {"path": "a.txt"}, id="toolu_r")),
        calls(tool_use("write_file", {"path": "a.txt", "content": "rewritten\n"}, id="toolu_w")),
        stream(text("Done.")),
    )
    async with spawn(anthropic_env(server), client=editor) as agent:
        await agent.initialize(FS)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert result.stop_reason == "end_turn"
    assert "     1\tunsaved in the editor" in tool_results(server, 1)[0]["content"]
    # The write's preview diffs against the buffer; the write goes to the editor only.
    ((asked, _),) = editor.permission_requests
    assert asked.content[0].old_text == "unsaved in the editor\n"
    assert editor.methods() == [
        "fs/read_text_file",
        "fs/read_text_file",
        "fs/read_text_file",
        "fs/write_text_file",
    ]
    assert editor.buffers[str(workdir / "a.txt")] == "rewritten\n"
    assert (workdir / "a.txt").read_text() == "saved on disk\n"
    asks = [m for s, m in agent.raw if m.get("method") == "session/request_permission"]
    write = next(i for i, (s, m) in enumerate(agent.raw) if m.get("method") == "fs/write_text_file")
    first_ask = next(i for i, (s, m) in enumerate(agent.raw) if m in asks)
    assert first_ask < write  # asked first, written after


async def test_bash_runs_in_the_editors_terminal(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    editor = EditorClient(answers=["allow_once"])
    server.script(
        calls(tool_use("bash", {"command": "echo from the terminal; exit 4"}, id="toolu_b")),
        stream(text("Done.")),
    )
    async with spawn(anthropic_env(server), client=editor) as agent:
        await agent.initialize(TERMINAL)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        loaded = EditorClient()
    assert result.stop_reason == "end_turn"
    assert editor.methods() == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    create = editor.calls[0][1]
    assert (create["command"], create["args"], create["cwd"]) == (
        "bash",
        ["-c", "echo from the terminal; exit 4"],
        str(workdir),
    )
    outcome = tool_results(server, 1)[0]
    assert outcome["is_error"] is True
    assert "from the terminal" in outcome["content"] and "Exit code 4." in outcome["content"]
    shown = [c for u in editor.tool_updates("toolu_b") for c in (u.content or [])]
    assert any(c.type == "terminal" and c.terminal_id == "term-1" for c in shown)
    assert loaded.calls == []

    # A replay cannot show the released terminal: it shows the command's output instead.
    async with spawn(anthropic_env(server), client=loaded) as agent:
        await agent.initialize(TERMINAL)
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        await until(lambda: bool(loaded.tool_updates("toolu_b")), agent)
    replayed = [c for u in loaded.tool_updates("toolu_b") for c in (u.content or [])]
    assert [c.type for c in replayed] == ["content"]
    assert "from the terminal" in replayed[0].content.text


async def test_cancel_kills_and_releases_the_editors_terminal(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    editor = EditorClient(answers=["allow_once"])
    server.script(
        calls(tool_use("bash", {"command": "sleep 60"}, id="toolu_s")), stream(text("after"))
    )
    async with spawn(anthropic_env(server), client=editor) as agent:
        await agent.initialize(TERMINAL)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await until(lambda: "terminal/wait_for_exit" in editor.methods(), agent)
        await agent.conn.cancel(session_id=sid)
        assert (await prompt).stop_reason == "cancelled"
        assert editor.methods()[-2:] == ["terminal/kill", "terminal/release"]
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("next")])
    assert again.stop_reason == "end_turn"
