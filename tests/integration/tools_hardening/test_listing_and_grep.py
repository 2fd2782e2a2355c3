"""Regression tests for hardening finding 10: no listing through a symlinked directory that
leads out of cwd, and grep searches big files in bounded memory (issue 25)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from adapters.tools.runner import LocalToolRunner
from tests.integration.tools_hardening.support import ROOT, _big_sparse_file, call, ctx, nothing

pytestmark = pytest.mark.integration


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
