"""Regression tests for the hardening findings about the tools: real files, processes and a
local HTTP server on 127.0.0.1 (names are mapped to it by a resolver stub; no traffic ever
leaves the machine)."""

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from adapters.tools.base import Limits, ToolInputError
from adapters.tools.network import address_kind
from adapters.tools.runner import LocalToolRunner
from adapters.tools.web import WebFetch
from adapters.workspace.local import LocalWorkspace
from adapters.workspace.processes import group_alive, live_launchers, stop_all_process_groups
from application.ports.tools import ToolContext, ToolResult

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def ctx(project: Path, session: str = "s1") -> ToolContext:
    return ToolContext(cwd=str(project), model="m", session_id=session)


async def nothing(chunk: str) -> None:
    pass


async def poll(condition, bound: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    """Wait until condition() holds, up to a generous bound; False if it never did."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('inside')\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere"
    (secret / "deeper").mkdir(parents=True)
    (secret / "secret.txt").write_text("SECRET-TOKEN\n")
    (secret / "deeper" / "more-secret.py").write_text("SECRET-TOKEN = 1\n")
    return secret


@pytest.fixture
def runner() -> LocalToolRunner:
    return LocalToolRunner(
        Limits(output_chars=2_000, read_lines=50, bash_timeout=30), LocalWorkspace()
    )


async def call(
    runner: LocalToolRunner, project: Path, name: str, **arguments: object
) -> ToolResult:
    plan = await runner.plan(name, arguments, ctx(project))
    assert plan.problem is None, plan.problem
    return await runner.run(name, arguments, ctx(project), nothing)


# --- Finding 10: no listing through a symlinked directory that leads out of cwd ----------


async def test_finding_10_glob_does_not_follow_symlinked_dirs_out_of_cwd(
    runner: LocalToolRunner, project: Path, outside: Path
) -> None:
    (project / "link").symlink_to(outside)
    (project / "src" / "loop").symlink_to(project)  # a loop inside cwd must not hang
    (project / "alias").symlink_to(project / "src")  # listed, but not entered
    for pattern in ("**/*", "link/*", "link/**/*.py", "*/*", "**/secret.txt"):
        plan = await runner.plan("glob", {"pattern": pattern}, ctx(project))
        assert not plan.outside_cwd
        result = await runner.run("glob", {"pattern": pattern}, ctx(project), nothing)
        found = [line for line in result.text.splitlines() if not line.startswith("No files")]
        assert not any("secret" in line or line.startswith("link") for line in found), pattern
    everything = await call(runner, project, "glob", pattern="**/*")
    assert everything.text.splitlines() == ["alias/", "src/", "src/app.py", "src/loop/"]


async def test_finding_10_grep_and_list_files_do_not_reach_out_through_symlinks(
    runner: LocalToolRunner, project: Path, outside: Path
) -> None:
    (project / "link").symlink_to(outside)
    grep = await call(runner, project, "grep", pattern="SECRET")
    assert grep.text == "No matches."
    listing = await call(runner, project, "list_files")
    assert listing.text.splitlines() == ["link/", "src/"]  # the link's own name is inside
    for tool, arguments in (
        ("list_files", {"path": "link"}),
        ("list_files", {"path": "link/deeper"}),
        ("grep", {"pattern": "SECRET", "path": "link"}),
        ("glob", {"pattern": "*", "path": "link"}),
    ):
        assert (await runner.plan(tool, arguments, ctx(project))).outside_cwd, (tool, arguments)


# --- Issue 25, finding 10: grep searches big files, in bounded memory ----------------------


async def test_finding_10_grep_finds_a_needle_in_a_6_mib_file(
    runner: LocalToolRunner, project: Path
) -> None:
    lines = 6 * 2**20 // 31 + 2  # lines of 31 bytes: over 6 MiB
    with (project / "big.log").open("w") as file:
        file.writelines(f"{n:>30}\n" for n in range(1, lines))
        file.write("the NEEDLE is here\n")
    assert (project / "big.log").stat().st_size > 6 * 2**20
    found = await call(runner, project, "grep", pattern="NEEDLE")
    assert found.text == f"big.log:{lines}:the NEEDLE is here"  # read_file's line number
    counted = await call(runner, project, "grep", pattern="NEEDLE", output_mode="count")
    assert counted.text == "big.log:1"


async def test_grep_finds_a_needle_at_the_end_of_a_3_mib_line(
    runner: LocalToolRunner, project: Path
) -> None:
    (project / "one-line.json").write_text("x" * (3 * 2**20) + "NEEDLE\nnext\n")
    found = await call(runner, project, "grep", pattern="NEEDLE", output_mode="count")
    assert found.text == "one-line.json:1"


async def test_finding_10_grep_names_the_files_it_does_not_search(
    runner: LocalToolRunner, project: Path
) -> None:
    _big_sparse_file(project / "huge.log", size=2**30 + 1)  # over the bound, a hole on disk
    found = await call(runner, project, "grep", pattern="line 7$")
    assert found.text == "No matches.\n[Not searched, over 1024 MiB each: huge.log]"
    assert found.raw_output == {"results": 0, "notSearched": 1}


def test_finding_10_grep_of_a_big_file_stays_small_in_memory(tmp_path: Path) -> None:
    _big_sparse_file(tmp_path / "huge.log", size=64 * 2**20)  # one 64 MiB line after the text
    with (tmp_path / "huge.log").open("a") as file:
        file.write("NEEDLE\n")
    script = textwrap.dedent(
        f"""
        import asyncio, tracemalloc
        from adapters.tools.base import Limits
        from adapters.tools.runner import LocalToolRunner
        from adapters.workspace.local import LocalWorkspace
        from application.ports.tools import ToolContext

        async def main():
            context = ToolContext(cwd={str(tmp_path)!r}, model="m")
            async def nothing(chunk): pass
            tracemalloc.start()
            result = await LocalToolRunner(Limits(), LocalWorkspace()).run(
                "grep", {{"pattern": "NEEDLE|^line 1999$", "output_mode": "count"}}, context,
                nothing,
            )
            print(result.text)
            print(tracemalloc.get_traced_memory()[1])

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    *text, peak = done.stdout.split()
    assert text == ["huge.log:2"]  # line 1999, and the needle after the hole
    assert int(peak) < 16 * 2**20, f"peak {peak} bytes while searching a 64 MiB file"


# --- Finding 2: the config file (outside cwd) is never read unasked -----------------------


@pytest.mark.parametrize("via", ["absolute", "dotdot", "dir-link", "file-link", "tilde"])
async def test_finding_2_config_file_outside_cwd_is_asked_about(
    runner: LocalToolRunner,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    via: str,
) -> None:
    config_dir = tmp_path / "home" / ".iac-code"
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text('api_key = "sk-CONFIG-SECRET"\n')
    monkeypatch.setenv("IAC_CODE_CONFIG_DIR", str(config_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (project / "cfg").symlink_to(config_dir)
    (project / "key.toml").symlink_to(config_dir / "config.toml")
    file = {
        "absolute": str(config_dir / "config.toml"),
        "dotdot": "../home/.iac-code/config.toml",
        "dir-link": "cfg/config.toml",
        "file-link": "key.toml",
        "tilde": "~/.iac-code/config.toml",
    }[via]
    directory = str(Path(file).parent) if via != "file-link" else str(config_dir)
    plans = [
        await runner.plan("read_file", {"path": file}, ctx(project)),
        await runner.plan("grep", {"pattern": "api_key", "path": file}, ctx(project)),
        await runner.plan("grep", {"pattern": "api_key", "path": directory}, ctx(project)),
        await runner.plan("glob", {"pattern": "*.toml", "path": directory}, ctx(project)),
        await runner.plan("list_files", {"path": directory}, ctx(project)),
    ]
    assert all(plan.outside_cwd for plan in plans)
    # and searches of cwd itself do not reach it through the links
    grep = await call(runner, project, "grep", pattern="CONFIG-SECRET")
    assert "CONFIG-SECRET" not in grep.text
    found = await call(runner, project, "glob", pattern="**/*.toml")
    assert "config.toml" not in found.text


# --- Finding 13: read_file reads what is asked, in bounded memory -------------------------


def _big_sparse_file(path: Path, size: int = 300 * 2**20) -> None:
    """Text lines at the start (more than the binary sniff looks at), then a hole: 300 MiB
    long, a few KiB on disk."""
    with path.open("wb") as file:
        file.write(b"".join(b"line %d\n" % n for n in range(1, 2001)))
        file.truncate(size)


async def test_finding_13_read_file_reads_only_the_lines_asked(
    runner: LocalToolRunner, project: Path
) -> None:
    _big_sparse_file(project / "huge.log")
    result = await call(runner, project, "read_file", path="huge.log", start_line=2, end_line=6)
    lines = result.text.splitlines()
    assert lines[:5] == [f"{n:6}\tline {n}" for n in range(2, 7)]
    assert "lines 2-6 of more (the file has 314572800 bytes) shown" in lines[5]
    assert result.raw_output["endLine"] == 6
    assert result.raw_output["totalLines"] is None  # not counted: that would read it all


def test_finding_13_read_file_of_a_huge_file_stays_small_in_memory(tmp_path: Path) -> None:
    _big_sparse_file(tmp_path / "huge.log")
    script = textwrap.dedent(
        f"""
        import asyncio, tracemalloc
        from adapters.tools.base import Limits
        from adapters.tools.runner import LocalToolRunner
        from adapters.workspace.local import LocalWorkspace
        from application.ports.tools import ToolContext

        async def main():
            runner = LocalToolRunner(Limits(), LocalWorkspace())
            context = ToolContext(cwd={str(tmp_path)!r}, model="m")
            async def nothing(chunk): pass
            tracemalloc.start()
            for arguments in ({{"end_line": 5}}, {{"start_line": 50_000}}, {{}}):
                result = await runner.run(
                    "read_file", {{"path": "huge.log", **arguments}}, context, nothing
                )
                assert not result.is_error, result.text
            print(tracemalloc.get_traced_memory()[1])

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    peak = int(done.stdout.split()[-1])
    assert peak < 16 * 2**20, f"peak {peak} bytes while reading a 300 MiB file"


async def test_finding_13_read_file_caps_characters_per_call_and_says_how_to_go_on(
    runner: LocalToolRunner, project: Path
) -> None:
    (project / "wide.txt").write_text("".join(f"{n:04}" + "x" * 796 + "\n" for n in range(1, 11)))
    first = await call(runner, project, "read_file", path="wide.txt")
    assert [line.split("\t")[0].strip() for line in first.text.splitlines()[:-1]] == ["1", "2"]
    assert "continue with start_line=3" in first.text
    assert "lines 1-2 of 10" in first.text
    second = await call(runner, project, "read_file", path="wide.txt", start_line=3)
    assert second.text.startswith("     3\t0003x")
    (project / "one-line.txt").write_text("y" * 2**20)
    long = await call(runner, project, "read_file", path="one-line.txt")
    assert len(long.text) < 2_200
    assert "[... line cut at 2000 bytes]" in long.text


async def test_read_file_edge_cases(runner: LocalToolRunner, project: Path) -> None:
    (project / "empty.txt").write_text("")
    assert (await call(runner, project, "read_file", path="empty.txt")).text == "(empty file)"
    (project / "three.txt").write_text("a\r\nb\nc")
    whole = await call(runner, project, "read_file", path="three.txt")
    assert whole.text == "     1\ta\n     2\tb\n     3\tc"
    past = await call(runner, project, "read_file", path="three.txt", start_line=9)
    assert "past the end: the file has 3 lines" in past.text
    bad = await runner.plan(
        "read_file", {"path": "three.txt", "start_line": 3, "end_line": 2}, ctx(project)
    )
    assert bad.problem == "end_line must not be before start_line."


# --- Finding 1: file names that are not UTF-8 come back as valid text ---------------------


def _undecodable_file(project: Path) -> bytes:
    raw = os.fsencode(project) + b"/caf\xe9.txt"
    Path(os.fsdecode(raw)).write_bytes(b"needle\n")
    return raw


async def test_finding_1_undecodable_file_names_are_shown_as_valid_text(
    runner: LocalToolRunner, project: Path
) -> None:
    raw = _undecodable_file(project)
    results = [
        await call(runner, project, "list_files"),
        await call(runner, project, "glob", pattern="*.txt"),
        await call(runner, project, "grep", pattern="needle"),
        await call(runner, project, "grep", pattern="needle", output_mode="files_with_matches"),
    ]
    for result in results:
        for text in (result.text, *(o.text for o in result.output), repr(result.raw_output)):
            text.encode("utf-8")  # raises on a lone surrogate
        assert "caf\\xe9.txt" in result.text
    # the name shown is exactly what bash's $'...' quoting needs to reach the file
    shown = results[1].text.strip()
    cat = await call(runner, project, "bash", command=f"cat $'{shown}'")
    assert "needle" in cat.text
    missing = await call(runner, project, "read_file", path=os.fsdecode(raw) + ".gone")
    assert missing.is_error
    missing.text.encode("utf-8")


# --- Finding 3: bash process groups die with the server -----------------------------------


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


# --- Finding 6: web_fetch asks before reaching private addresses or leaking queries -------


class _Site(BaseHTTPRequestHandler):
    hits: list[str] = []  # shared by the handler instances of one test

    def do_GET(self) -> None:
        _Site.hits.append(f"{self.headers['Host']}{self.path}")
        port = self.server.server_address[1]
        redirects = {
            "/to-private": f"http://internal.test:{port}/page",
            "/to-new-host-query": f"http://other.test:{port}/page?secret=1",
            "/to-same-host": "/page?from=redirect",
            "/to-file": "file:///etc/passwd",
            "/loop": "/loop",
        }
        if self.path in redirects:
            self.send_response(302)
            self.send_header("Location", redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = f"<p>page {self.path} for {self.headers['Host']}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[int]:
    _Site.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


NAMES = {"public.test": "127.0.0.1", "other.test": "127.0.0.1", "internal.test": "127.0.0.2"}


async def stub_resolve(host: str, port: int) -> tuple[str, ...]:
    if host not in NAMES:
        raise OSError(f"{host}: unknown in this test")
    return (NAMES[host],)


def stub_classify(address: str) -> str | None:
    """127.0.0.1 plays a public address (the local server behind the fake public names);
    everything else is judged as for real (127.0.0.2 is loopback)."""
    return None if address == "127.0.0.1" else address_kind(address)


def stub_web() -> WebFetch:
    return WebFetch(Limits(fetch_chars=500, fetch_bytes=4_096), stub_resolve, stub_classify)


async def fetch(web: WebFetch, url: str, session: str = "s1") -> tuple[str | None, ToolResult]:
    context = ToolContext(cwd="/", model="m", session_id=session)
    plan = await web.plan({"url": url}, context)
    assert plan.problem is None, plan.problem
    return plan.ask_reason, await web.run({"url": url}, context, nothing)


async def test_finding_6_web_fetch_of_loopback_asks(
    runner: LocalToolRunner, project: Path, site: int
) -> None:
    for url in (f"http://127.0.0.1:{site}/page", f"http://localhost:{site}/page"):
        plan = await runner.plan("web_fetch", {"url": url}, ctx(project))
        assert plan.ask_reason is not None and "loopback address" in plan.ask_reason
        assert plan.always_asks
    for address, kind in (
        ("169.254.169.254", "link-local"),
        ("10.1.2.3", "private"),
        ("192.168.0.1", "private"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fe80::1%eth0", "link-local"),
        ("100.64.0.1", "non-public"),
        ("93.184.216.34", None),
    ):
        assert address_kind(address) == kind, address
    # asked and allowed: the fetch goes to the address that was checked
    result = await runner.run(
        "web_fetch", {"url": f"http://127.0.0.1:{site}/page"}, ctx(project), nothing
    )
    assert result.text == f"page /page for 127.0.0.1:{site}"


async def test_finding_6_plain_public_gets_stay_allowed_and_queries_to_new_hosts_ask(
    site: int,
) -> None:
    web = stub_web()
    reason, page = await fetch(web, f"http://public.test:{site}/page")
    assert reason is None
    assert page.text == f"page /page for public.test:{site}"  # name kept in Host, pinned address
    reason, _ = await fetch(web, f"http://other.test:{site}/page?q=secret")
    assert reason is not None and "query string to other.test" in reason
    reason, _ = await fetch(web, f"http://public.test:{site}/page?q=1")
    assert reason is None  # fetched before in this session
    reason, _ = await fetch(web, f"http://public.test:{site}/page?q=1", session="s2")
    assert reason is not None  # another session has fetched nothing
    reason, _ = await fetch(web, f"http://internal.test:{site}/page")
    assert reason == "internal.test resolves to 127.0.0.2, which is a loopback address"


async def test_finding_6_redirects_needing_permission_are_not_followed(site: int) -> None:
    web = stub_web()
    _, private = await fetch(web, f"http://public.test:{site}/to-private")
    assert not private.is_error
    assert f"redirects to http://internal.test:{site}/page, which was not fetched" in private.text
    assert "loopback address" in private.text
    _, query = await fetch(web, f"http://public.test:{site}/to-new-host-query")
    assert "other.test" in query.text and "query string" in query.text
    assert query.raw_output["followed"] is False
    _, same = await fetch(web, f"http://public.test:{site}/to-same-host")
    assert same.text == f"page /page?from=redirect for public.test:{site}"
    _, scheme = await fetch(web, f"http://public.test:{site}/to-file")
    assert "not an http(s) URL" in scheme.text
    _, loop = await fetch(web, f"http://public.test:{site}/loop")
    assert loop.is_error and "redirects" in loop.text
    assert all(not hit.startswith(("internal.test", "other.test")) for hit in _Site.hits)


async def test_finding_6_a_run_without_its_plan_fetches_nothing_that_needs_asking(
    site: int,
) -> None:
    web = stub_web()
    context = ToolContext(cwd="/", model="m", session_id="s1")
    result = await web.run({"url": f"http://internal.test:{site}/page"}, context, nothing)
    assert result.is_error and "was not fetched" in result.text
    assert _Site.hits == []


async def test_finding_6_unresolvable_hosts_fail_before_asking() -> None:
    with pytest.raises(ToolInputError, match=r"Cannot resolve nowhere\.test"):
        await stub_web().plan({"url": "http://nowhere.test/"}, ToolContext(cwd="/", model="m"))
