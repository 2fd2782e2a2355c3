"""The local tools against real temp directories, processes and a local HTTP server."""

import asyncio
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from adapters.tools.base import Limits
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.local import LocalWorkspace
from application.ports.tools import ToolContext, ToolResult
from domain.tool_call import DiffOutput
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.integration

LOCAL = LocalWorkspace()  # the runner's workspace for contexts that bring none


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n# TODO fix\n")
    (root / "src" / "util.py").write_text("VALUE = 1\nvalue = 2\n")
    (root / "README.md").write_text("# Demo\nTODO: write docs\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("TODO in git internals\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


@pytest.fixture
def runner() -> LocalToolRunner:
    return LocalToolRunner(
        Limits(
            output_chars=2_000,
            read_lines=50,
            bash_timeout=5,
            bash_max_timeout=10,
            fetch_chars=500,
            fetch_bytes=4_096,
        ),
        LOCAL,
    )


def ctx(project: Path, session: str = "s1") -> ToolContext:
    return ToolContext(cwd=str(project), model="m", session_id=session)


async def run(
    runner: LocalToolRunner,
    project: Path,
    name: str,
    **arguments: object,
) -> ToolResult:
    seen: list[str] = []

    async def progress(chunk: str) -> None:
        seen.append(chunk)

    plan = await runner.plan(name, arguments, ctx(project))
    assert plan.problem is None, plan.problem
    return await runner.run(name, arguments, ctx(project), progress)


async def test_read_file_numbers_lines_and_reads_ranges(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "read_file", path="src/app.py")
    assert result.text.splitlines()[0] == "     1\tdef main():"
    part = await run(runner, project, "read_file", path="src/app.py", start_line=2, end_line=2)
    assert part.text.startswith("     2\t    return 1")
    assert "lines 2-2 of 3" in part.text
    assert part.raw_output["totalLines"] == 3


async def test_read_file_truncates_long_files_with_a_marker(runner, project) -> None:  # type: ignore[no-untyped-def]
    (project / "long.txt").write_text("\n".join(f"line {n}" for n in range(500)))
    result = await run(runner, project, "read_file", path="long.txt")
    assert "lines 1-50 of 500" in result.text
    assert "line 60" not in result.text


async def test_binary_files_are_reported_not_dumped(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "read_file", path="logo.png")
    assert result.is_error
    assert "binary file" in result.text
    assert "PNG" not in result.text


async def test_missing_file_is_an_error_result(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "read_file", path="nope.py")
    assert result.is_error
    assert "nope.py" in result.text


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "{tmp}/secret.txt", "src/../../secret.txt", "link/secret.txt", "linkfile"],
)
async def test_escapes_from_cwd_are_flagged(runner, project, path: str) -> None:  # type: ignore[no-untyped-def]
    (project / "link").symlink_to(project.parent)
    (project / "linkfile").symlink_to(project.parent / "secret.txt")
    plan = await runner.plan("read_file", {"path": path.format(tmp=project.parent)}, ctx(project))
    assert plan.outside_cwd
    for tool in ("list_files", "grep", "glob"):
        arguments = {"path": str(project.parent), "pattern": "*" if tool == "glob" else "."}
        assert (await runner.plan(tool, arguments, ctx(project))).outside_cwd


async def test_paths_inside_cwd_are_not_flagged(runner, project) -> None:  # type: ignore[no-untyped-def]
    for path in ("src/app.py", str(project / "README.md"), "./src/../README.md"):
        plan = await runner.plan("read_file", {"path": path}, ctx(project))
        assert not plan.outside_cwd
        assert plan.locations[0].startswith(str(project))


async def test_list_files_marks_directories(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "list_files")
    assert result.text.splitlines() == [".git/", "logo.png", "README.md", "src/"]


async def test_glob_finds_files_and_skips_vcs_dirs(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "glob", pattern="**/*.py")
    assert result.text.splitlines() == ["src/app.py", "src/util.py"]
    bad = await runner.plan("glob", {"pattern": "../*"}, ctx(project))
    assert bad.problem


async def test_grep_modes(runner, project) -> None:  # type: ignore[no-untyped-def]
    content = await run(runner, project, "grep", pattern="TODO")
    assert content.text.splitlines() == ["README.md:2:TODO: write docs", "src/app.py:3:# TODO fix"]
    files = await run(
        runner,
        project,
        "grep",
        pattern="value",
        case_insensitive=True,
        output_mode="files_with_matches",
    )
    assert files.text == "src/util.py"
    count = await run(
        runner,
        project,
        "grep",
        pattern="value",
        case_insensitive=True,
        output_mode="count",
        glob="*.py",
    )
    assert count.text == "src/util.py:2"
    limited = await run(runner, project, "grep", pattern=".", max_results=2)
    assert "more results not shown" in limited.text


async def test_grep_rejects_bad_regex_before_asking(runner, project) -> None:  # type: ignore[no-untyped-def]
    plan = await runner.plan("grep", {"pattern": "(unclosed"}, ctx(project))
    assert plan.problem is not None
    assert "regular expression" in plan.problem


async def test_write_file_previews_and_reports_a_diff(runner, project) -> None:  # type: ignore[no-untyped-def]
    plan = await runner.plan("write_file", {"path": "new/dir/x.txt", "content": "hi"}, ctx(project))
    assert plan.preview == (
        DiffOutput(path=str(project / "new/dir/x.txt"), old_text=None, new_text="hi"),
    )
    result = await run(runner, project, "write_file", path="new/dir/x.txt", content="hi")
    assert (project / "new/dir/x.txt").read_text() == "hi"
    assert result.raw_output["created"] is True
    again = await run(runner, project, "write_file", path="new/dir/x.txt", content="bye")
    assert again.output == (
        DiffOutput(path=str(project / "new/dir/x.txt"), old_text="hi", new_text="bye"),
    )


async def test_edit_file_replaces_exactly_one_match(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(
        runner,
        project,
        "edit_file",
        path="src/app.py",
        old_string="return 1",
        new_string="return 2",
    )
    assert "return 2" in (project / "src/app.py").read_text()
    diff = result.output[0]
    assert isinstance(diff, DiffOutput)
    assert "return 1" in (diff.old_text or "")
    assert "return 2" in diff.new_text


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"old_string": "missing", "new_string": "x"}, "was not found"),
        ({"old_string": "= ", "new_string": "=="}, "appears 2 times"),
        ({"old_string": "same", "new_string": "same"}, "the same"),
    ],
)
async def test_edit_file_fails_clearly(runner, project, arguments, problem) -> None:  # type: ignore[no-untyped-def]
    plan = await runner.plan("edit_file", {"path": "src/util.py", **arguments}, ctx(project))
    assert plan.problem is not None
    assert problem in plan.problem
    assert (project / "src/util.py").read_text() == "VALUE = 1\nvalue = 2\n"


async def test_edit_file_replace_all(runner, project) -> None:  # type: ignore[no-untyped-def]
    await run(
        runner,
        project,
        "edit_file",
        path="src/util.py",
        old_string="1",
        new_string="3",
        replace_all=True,
    )
    assert (project / "src/util.py").read_text() == "VALUE = 3\nvalue = 2\n"


async def test_bash_runs_in_cwd_and_streams(runner, project) -> None:  # type: ignore[no-untyped-def]
    chunks: list[str] = []

    async def progress(chunk: str) -> None:
        chunks.append(chunk)

    result = await runner.run(
        "bash",
        {"command": "pwd; echo out; echo err >&2; exit 3"},
        ctx(project),
        progress,
    )
    assert result.is_error
    assert str(project) in result.text
    assert "err" in result.text
    assert "Exit code 3." in result.text
    assert "".join(chunks).startswith(str(project))
    assert result.raw_output == {"exitCode": 3, "timedOut": False}


def _alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for an init that does not reap (containers)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_bash_timeout_stops_the_whole_process_group(runner, project) -> None:  # type: ignore[no-untyped-def]
    pid_file = project / "child.pid"
    # The timeout only has to outlast starting one background process, even on a loaded
    # machine; the command itself would run for a minute.
    result = await run(
        runner, project, "bash", command=f"sleep 60 & echo $! > {pid_file}; wait", timeout=5
    )
    assert result.is_error
    assert "Timed out" in result.text
    assert not _alive(int(pid_file.read_text()))


async def test_cancelling_bash_kills_its_process_group(runner, project) -> None:  # type: ignore[no-untyped-def]
    pid_file = project / "child.pid"

    async def progress(chunk: str) -> None:
        pass

    task = asyncio.create_task(
        runner.run(
            "bash",
            {"command": f"sleep 60 & echo $! > {pid_file}; wait"},
            ctx(project),
            progress,
        )
    )
    for _ in range(1000):  # a generous bound: the command starts within it on any machine
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(int(pid_file.read_text()))


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        pages = {
            "/page": (
                "text/html; charset=utf-8",
                b"<html><head><title>t</title><script>var x=1</script></head><body>"
                b"<h1>Hello</h1><p>World &amp; more</p></body></html>",
            ),
            "/big": ("text/plain", b"x" * 20_000),
            "/image": ("image/png", b"\x89PNG"),
        }
        kind, body = pages.get(self.path, ("text/plain", b"not found"))
        self.send_response(200 if self.path in pages else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


async def test_web_fetch_extracts_text_from_html(runner, project, web) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "web_fetch", url=f"{web}/page")
    assert result.text == "Hello\nWorld & more"
    assert result.raw_output["status"] == 200


async def test_web_fetch_caps_size_and_reports_binary_and_errors(runner, project, web) -> None:  # type: ignore[no-untyped-def]
    big = await run(runner, project, "web_fetch", url=f"{web}/big")
    assert "truncated" in big.text
    assert "download stopped at 4096 bytes" in big.text
    image = await run(runner, project, "web_fetch", url=f"{web}/image")
    assert "image/png" in image.text
    assert "not shown" in image.text
    missing = await run(runner, project, "web_fetch", url=f"{web}/missing")
    assert missing.is_error
    plan = await runner.plan("web_fetch", {"url": "file:///etc/passwd"}, ctx(project))
    assert plan.problem is not None


async def test_grep_does_not_follow_symlinks_out_of_cwd(runner, project) -> None:  # type: ignore[no-untyped-def]
    secret_dir = project.parent / "secret"
    secret_dir.mkdir()
    (secret_dir / "id_rsa").write_text("SECRET-KEY-MATERIAL\n")
    (project / "link.txt").symlink_to(secret_dir / "id_rsa")
    (project / "inside-link.py").symlink_to(project / "src" / "util.py")
    result = await run(runner, project, "grep", pattern="SECRET|VALUE")
    assert "SECRET-KEY-MATERIAL" not in result.text
    assert "inside-link.py:1:VALUE = 1" in result.text  # links that stay inside still count


async def test_fifos_are_not_read(runner, project) -> None:  # type: ignore[no-untyped-def]
    os.mkfifo(project / "pipe")
    result = await asyncio.wait_for(run(runner, project, "grep", pattern="x"), PATIENCE)
    assert "pipe" not in result.text
    read = await asyncio.wait_for(run(runner, project, "read_file", path="pipe"), PATIENCE)
    assert read.is_error
    assert "not a regular file" in read.text


async def test_invalid_glob_patterns_fail_before_running(runner, project) -> None:  # type: ignore[no-untyped-def]
    plan = await runner.plan("glob", {"pattern": "src/**.py"}, ctx(project))
    assert plan.problem is not None
    assert "'**'" in plan.problem


async def test_tool_bugs_become_error_results(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "write_file", path="x.txt", content="\ud800")
    assert result.is_error
    assert "write_file tool failed" in result.text


async def test_bash_does_not_see_the_agents_credentials(runner, project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("IAC_CODE_API_KEY", "sk-very-secret")
    monkeypatch.setenv("IACCODE_ACP_HTTP_TOKEN", "token-very-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-also-very-secret")  # any provider's key
    monkeypatch.setenv("HARMLESS", "visible")
    result = await run(runner, project, "bash", command="env")
    assert "very-secret" not in result.text
    assert "HARMLESS=visible" in result.text


async def test_bash_background_children_neither_block_nor_outlive_it(runner, project) -> None:  # type: ignore[no-untyped-def]
    pid_file = project / "bg.pid"
    result = await run(
        runner, project, "bash", command=f"sleep 300 & echo $! > {pid_file}; echo done"
    )
    assert result.raw_output["timedOut"] is False  # it did not wait for the child
    assert "done" in result.text
    assert "Exit code 0." in result.text
    assert not _alive(int(pid_file.read_text()))


async def test_bash_keeps_huge_output_bounded(runner, project) -> None:  # type: ignore[no-untyped-def]
    result = await run(runner, project, "bash", command="yes line | head -c 3000000")
    assert len(result.text) < 2_500
    assert "characters truncated" in result.text
