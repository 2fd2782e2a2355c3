"""The repository's state from the git command: bounded in time and output, never raising."""

import asyncio
import contextlib
import logging
import os
import signal
from dataclasses import dataclass

from adapters.secrets import is_secret
from domain.knowledge import GIT_STATUS_LINES, GitState

log = logging.getLogger(__name__)

GIT_SECONDS = 3.0  # each git command's time; a huge repository's status may take longer
_OUTPUT_LIMIT = 64 * 1024  # bytes of output kept; lines past it are only counted
# Set by a hook or a wrapper, these would point git at some other repository than cwd's.
_REPOSITORY_VARIABLES = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"}
)


@dataclass(frozen=True, slots=True)
class GitRun:
    code: int
    output: str  # at most _OUTPUT_LIMIT bytes of stdout
    lines: int  # stdout's lines, all of them


class GitTimeout(Exception):
    pass


def _environment() -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not is_secret(name) and name not in _REPOSITORY_VARIABLES
    }
    # A read must not take the index lock from the user's own git; C: parseable output.
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    return env


async def run_git(cwd: str, *args: str, seconds: float) -> GitRun | None:
    """git's exit code and output; None when git cannot be started here. Raises
    GitTimeout when it does not finish in time (it is killed, with its children)."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            env=_environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # its own process group: a kill reaches all of it
        )
    except OSError as error:  # no git installed, or cwd gone
        log.info("git cannot run in %s: %s", cwd, error)
        return None
    try:
        output, lines = await asyncio.wait_for(_collect(process), seconds)
    except TimeoutError:
        raise GitTimeout(f"git {' '.join(args)} took over {seconds:g} s") from None
    finally:
        await _stop(process)
    return GitRun(code=process.returncode or 0, output=output, lines=lines)


async def _collect(process: asyncio.subprocess.Process) -> tuple[str, int]:
    assert process.stdout is not None
    kept, lines = bytearray(), 0
    while chunk := await process.stdout.read(65536):
        lines += chunk.count(b"\n")
        kept += chunk[: max(0, _OUTPUT_LIMIT - len(kept))]
    await process.wait()
    return kept.decode("utf-8", errors="replace"), lines


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await asyncio.shield(process.wait())


async def git_state(cwd: str, *, seconds: float = GIT_SECONDS) -> GitState | None:
    """None outside a repository (or without git, or when git does not answer)."""
    try:
        top = await run_git(cwd, "rev-parse", "--show-toplevel", seconds=seconds)
    except GitTimeout as error:
        log.warning("git state of %s left out: %s", cwd, error)
        return None
    if top is None or top.code != 0 or not top.output.strip():
        return None
    branch, status = await asyncio.gather(_branch(cwd, seconds), _status(cwd, seconds))
    lines, more = status
    return GitState(branch=branch, status=lines, more_status=more, root=top.output.rstrip("\r\n"))


async def _branch(cwd: str, seconds: float) -> str | None:
    # symbolic-ref names the branch even before its first commit, where
    # `rev-parse --abbrev-ref HEAD` fails; it fails (quietly, code 1) on a detached HEAD.
    try:
        run = await run_git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD", seconds=seconds)
    except GitTimeout as error:
        log.warning("git branch of %s left out: %s", cwd, error)
        return None
    if run is None or run.code != 0:
        return None
    return run.output.strip() or None


async def _status(cwd: str, seconds: float) -> tuple[tuple[str, ...], int]:
    try:
        run = await run_git(cwd, "-c", "color.status=false", "status", "--short", seconds=seconds)
    except GitTimeout as error:
        log.warning("git status of %s left out: %s", cwd, error)
        return (f"(git status took over {seconds:g} s: not shown)",), 0
    if run is None or run.code != 0:
        return (), 0
    lines = tuple(line for line in run.output.splitlines() if line)[:GIT_STATUS_LINES]
    return lines, max(0, run.lines - len(lines))
