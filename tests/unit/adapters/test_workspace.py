"""The Workspace port's contract, held by this machine's workspace and by the editor's (ACP
fs/* and terminal/*, here against a scripted client answering from memory)."""

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.jsonrpc import RpcError
from adapters.tools.base import ToolInputError
from adapters.tools.files import EditFile, WriteFile
from adapters.workspace.client import AcpWorkspaces
from adapters.workspace.local import LocalWorkspace
from application.attachments.room import Attachments
from application.ports.tools import ToolContext
from application.ports.workspace import PathKind, Window, Workspace, WorkspaceError
from domain.sandbox import UNCONFINED
from domain.tool_call import DiffOutput, TerminalOutput, ToolOutput

SID = "s1"
COMMAND = "printf 'one\\ntwo\\n'; exit 3"
WINDOW = Window(lines=100, chars=10_000)
EVERYTHING = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


class _Ignore(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any:
        raise AssertionError("the editor calls nothing here")

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None:
        raise AssertionError("the editor sends nothing here")

    async def peer_closed(self, peer: Connection) -> None:
        pass


@dataclass
class ScriptedEditor:
    """The client side of a real Connection: unsaved buffers and terminals, in memory."""

    buffers: dict[str, str] = field(default_factory=dict)
    exits: dict[str, tuple[str, int]] = field(default_factory=dict)  # command -> output, code
    hang: bool = False  # terminals never exit
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    fail: set[str] = field(default_factory=set)  # methods answered with an error
    connection: Connection | None = None

    def connect(self, capabilities: object) -> Connection:
        self.connection = Connection(self._send, _Ignore())
        self.connection.client_capabilities = capabilities
        return self.connection

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]

    async def _send(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message["params"]
        self.calls.append((method, params))
        asyncio.get_running_loop().create_task(self._answer(message["id"], method, params))

    async def _answer(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        assert self.connection is not None
        try:
            result = await self._serve(method, params)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
        except RpcError as exc:
            reply = {"jsonrpc": "2.0", "id": request_id, "error": exc.to_json()}
        await self.connection.receive(json.dumps(reply))

    async def _serve(self, method: str, params: dict[str, Any]) -> Any:
        if method in self.fail:
            raise RpcError(-32603, "the editor is unwell")
        match method:
            case "fs/read_text_file":
                text = self.buffers.get(params["path"])
                if text is None:
                    raise RpcError(-32002, "Resource not found")
                lines = text.splitlines(keepends=True)
                first = params.get("line", 1) - 1
                limit = params.get("limit")
                return {"content": "".join(lines[first : None if limit is None else first + limit])}
            case "fs/write_text_file":
                self.buffers[params["path"]] = params["content"]
                return {}
            case "terminal/create":
                return {"terminalId": f"term-{len(self.calls)}"}
            case "terminal/wait_for_exit":
                if self.hang:
                    await asyncio.Event().wait()
                return {"exitCode": self._exit()[1]}
            case "terminal/output":
                output, code = self._exit()
                status = {"signal": "SIGKILL"} if self.hang else {"exitCode": code}
                return {"output": output, "truncated": False, "exitStatus": status}
            case "terminal/kill" | "terminal/release":
                return {}
        raise RpcError(-32601, f"Method not found: {method}")

    def _exit(self) -> tuple[str, int]:
        create = next(p for m, p in self.calls if m == "terminal/create")
        return self.exits.get(create["args"][1], ("", 0))


Make = Callable[[Path], Workspace]


def local(tmp_path: Path) -> Workspace:
    return LocalWorkspace()


def _room() -> Attachments:
    """Only who controls the session is asked of it here."""
    return Attachments(close=None, busy=lambda _: False)  # type: ignore[arg-type]


def editor(tmp_path: Path, capabilities: object = EVERYTHING) -> tuple[Workspace, ScriptedEditor]:
    scripted = ScriptedEditor(exits={COMMAND: ("one\ntwo\n", 3)})
    room = _room()
    room.attach(SID, scripted.connect(capabilities))
    return AcpWorkspaces(room, LocalWorkspace()).for_session(
        SID, (str(tmp_path),), UNCONFINED
    ), scripted


@pytest.fixture(params=["local", "editor"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    return local(tmp_path) if request.param == "local" else editor(tmp_path)[0]


async def quiet(_: str) -> None:
    pass


async def nothing(_: ToolOutput) -> None:
    pass


# -- the contract


async def test_what_is_written_is_read_back(workspace: Workspace, tmp_path: Path) -> None:
    path = str(tmp_path / "sub" / "a.txt")
    assert await workspace.read_text(path) is None
    await workspace.write_text(path, "alpha\nbeta\ngamma\n")
    assert await workspace.read_text(path) == "alpha\nbeta\ngamma\n"


async def test_lines_are_numbered_and_bounded(workspace: Workspace, tmp_path: Path) -> None:
    path = str(tmp_path / "a.txt")
    await workspace.write_text(path, "".join(f"line {n}\n" for n in range(1, 11)))
    whole = await workspace.read_lines(path, 1, None, WINDOW)
    assert whole.render(1, None) == "\n".join(f"{n:6}\tline {n}" for n in range(1, 11))
    part = await workspace.read_lines(path, 3, 4, WINDOW)
    assert part.lines == ("     3\tline 3", "     4\tline 4")
    capped = await workspace.read_lines(path, 2, None, Window(lines=3, chars=10_000))
    assert (capped.last, capped.capped) == (4, True)
    assert "continue with start_line=5" in capped.render(2, None)


async def test_directories_are_listed_and_kinds_told(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f.txt").write_text("x")
    assert sorted(await workspace.list_dir(str(tmp_path))) == ["d/", "f.txt"]
    assert await workspace.kind(str(tmp_path / "d")) is PathKind.DIRECTORY
    assert await workspace.kind(str(tmp_path / "f.txt")) is PathKind.FILE
    assert await workspace.kind(str(tmp_path / "nope")) is PathKind.MISSING


async def test_a_command_ends_with_its_output_and_exit_code(
    workspace: Workspace, tmp_path: Path
) -> None:
    ran = await workspace.run(
        COMMAND, cwd=str(tmp_path), seconds=30, output_limit=1000, chunk=quiet, show=nothing
    )
    assert (ran.output, ran.exit_code, ran.timed_out) == ("one\ntwo\n", 3, False)


# -- the editor's, beyond the contract


async def test_reads_come_from_the_editors_unsaved_buffer(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("on disk\n")
    workspace, scripted = editor(tmp_path)
    scripted.buffers[str(tmp_path / "a.txt")] = "unsaved\n"
    excerpt = await workspace.read_lines(str(tmp_path / "a.txt"), 1, None, WINDOW)
    assert excerpt.lines == ("     1\tunsaved",)
    assert scripted.calls == [
        (
            "fs/read_text_file",
            {"sessionId": SID, "path": str(tmp_path / "a.txt"), "line": 1, "limit": 101},
        )
    ]
    await workspace.write_text(str(tmp_path / "a.txt"), "new\n")
    assert (tmp_path / "a.txt").read_text() == "on disk\n"  # nothing written here
    assert scripted.buffers[str(tmp_path / "a.txt")] == "new\n"


@pytest.mark.parametrize(
    "capabilities",
    [None, {}, {"fs": {"readTextFile": False}}, {"fs": "yes", "terminal": 3}, ["junk"]],
)
async def test_without_the_capability_everything_is_local(
    tmp_path: Path, capabilities: object
) -> None:
    (tmp_path / "a.txt").write_text("on disk\n")
    workspace, scripted = editor(tmp_path, capabilities)
    assert await workspace.read_text(str(tmp_path / "a.txt")) == "on disk\n"
    await workspace.write_text(str(tmp_path / "b.txt"), "b")
    ran = await workspace.run(
        "echo here", cwd=str(tmp_path), seconds=30, output_limit=100, chunk=quiet, show=nothing
    )
    assert ((tmp_path / "b.txt").read_text(), ran.output) == ("b", "here\n")
    assert scripted.calls == []


async def test_files_outside_the_sessions_directories_stay_local(tmp_path: Path) -> None:
    inside, outside = tmp_path / "project", tmp_path / "elsewhere.txt"
    inside.mkdir()
    outside.write_text("outside\n")
    scripted = ScriptedEditor()
    room = _room()
    room.attach(SID, scripted.connect(EVERYTHING))
    workspace = AcpWorkspaces(room, LocalWorkspace()).for_session(SID, (str(inside),), UNCONFINED)
    assert await workspace.read_text(str(outside)) == "outside\n"
    assert scripted.calls == []


async def test_an_editor_error_is_a_workspace_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("on disk\n")
    workspace, scripted = editor(tmp_path)
    scripted.fail = {"fs/read_text_file", "fs/write_text_file"}
    with pytest.raises(WorkspaceError, match="could not serve fs/read_text_file"):
        await workspace.read_text(str(tmp_path / "a.txt"))
    with pytest.raises(WorkspaceError, match="fs/write_text_file: the editor is unwell"):
        await workspace.write_text(str(tmp_path / "a.txt"), "x")


async def test_a_command_runs_in_the_editors_terminal_which_is_shown_then_released(
    tmp_path: Path,
) -> None:
    workspace, scripted = editor(tmp_path)
    shown: list[ToolOutput] = []

    async def show(output: ToolOutput) -> None:
        shown.append(output)

    ran = await workspace.run(
        COMMAND, cwd=str(tmp_path), seconds=30, output_limit=1000, chunk=quiet, show=show
    )
    assert ran.exit_code == 3
    assert scripted.methods() == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    create = scripted.calls[0][1]
    assert (create["command"], create["args"], create["cwd"]) == (
        "bash",
        ["-c", COMMAND],
        str(tmp_path),
    )
    assert (create["env"], create["outputByteLimit"]) == ([], 1000)
    assert shown == [TerminalOutput(terminal_id="term-1")]


async def test_a_terminal_out_of_time_is_killed_and_released(tmp_path: Path) -> None:
    workspace, scripted = editor(tmp_path)
    scripted.hang = True
    ran = await workspace.run(
        "sleep 100", cwd=str(tmp_path), seconds=0.05, output_limit=1000, chunk=quiet, show=nothing
    )
    assert (ran.timed_out, ran.exit_code, ran.signal) == (True, None, "SIGKILL")
    assert scripted.methods()[-3:] == ["terminal/kill", "terminal/output", "terminal/release"]


async def test_a_cancelled_command_kills_and_releases_its_terminal(tmp_path: Path) -> None:
    workspace, scripted = editor(tmp_path)
    scripted.hang = True
    running = asyncio.ensure_future(
        workspace.run(
            "sleep 100", cwd=str(tmp_path), seconds=60, output_limit=10, chunk=quiet, show=nothing
        )
    )
    while "terminal/wait_for_exit" not in scripted.methods():
        await asyncio.sleep(0)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert scripted.methods()[-2:] == ["terminal/kill", "terminal/release"]


async def test_an_editors_never_saved_buffer_can_be_edited(tmp_path: Path) -> None:
    workspace, scripted = editor(tmp_path)
    path = str(tmp_path / "draft.py")  # not on disk: only in the editor
    scripted.buffers[path] = "x = 1\n"
    context = ToolContext(cwd=str(tmp_path), model="m", session_id=SID, workspace=workspace)
    arguments = {"path": path, "old_string": "1", "new_string": "2"}
    plan = await EditFile().plan(arguments, context)
    assert plan.preview[0] == DiffOutput(path=path, old_text="x = 1\n", new_text="x = 2\n")
    await EditFile().run(arguments, context, quiet)
    assert scripted.buffers[path] == "x = 2\n"
    assert not (tmp_path / "draft.py").exists()
    # Without a buffer either, it does not exist.
    with pytest.raises(ToolInputError, match="does not exist"):
        await EditFile().plan({**arguments, "path": str(tmp_path / "gone.py")}, context)


async def test_finding_9_creating_a_file_does_not_ask_the_editor_to_read_it(
    tmp_path: Path,
) -> None:
    """Issue #42, finding 9: `acpx exec "create …"` showed "[error] RUNTIME: Internal error"
    twice per file created, the editor answering with an error the reads of a file that did
    not exist yet (for the plan, and again after the permission). write_file asks only about
    files that exist."""
    workspace, scripted = editor(tmp_path)
    scripted.fail.add("fs/read_text_file")  # as acpx: an error for a missing file
    context = ToolContext(cwd=str(tmp_path), model="m", session_id=SID, workspace=workspace)
    arguments = {"path": str(tmp_path / "new.txt"), "content": "hello\n"}
    plan = await WriteFile().plan(arguments, context)
    done = await WriteFile().run(arguments, context, quiet)
    assert plan.preview[0] == DiffOutput(path=arguments["path"], old_text=None, new_text="hello\n")
    assert done.raw_output == {"path": arguments["path"], "bytes": 6, "created": True}
    assert scripted.methods() == ["fs/write_text_file"]
    # A file that exists is still read as the editor shows it.
    (tmp_path / "old.txt").write_text("on disk\n")
    scripted.buffers[str(tmp_path / "old.txt")] = "unsaved\n"
    scripted.fail.clear()
    plan = await WriteFile().plan({**arguments, "path": str(tmp_path / "old.txt")}, context)
    assert plan.preview[0].old_text == "unsaved\n"  # type: ignore[union-attr]
