"""Regression tests for hardening findings 2, 13 and 1: the config file outside cwd is never read
unasked, read_file reads what is asked in bounded memory, file names that are not UTF-8 come
back as valid text."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from adapters.tools.runner import LocalToolRunner
from tests.integration.tools_hardening.support import ROOT, _big_sparse_file, call, ctx

pytestmark = pytest.mark.integration


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
