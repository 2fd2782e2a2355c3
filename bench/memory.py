"""Memory per open idle session: what the real `iac-code acp` process (stdio, demo model)
keeps for each session it holds open and idle, read from outside as RSS growth.

Run alone:  .venv/bin/python bench/memory.py [--sessions 100] [--runs 3]
Two ways of opening: `session/new`, and `session/load` of stored sessions of 20 messages
each (half of the turns with a tool call), seeded directly in the database. The project is
a small git repository with an AGENTS.md, a skill and a changed file, so what a session is
told about its project (instructions, skills, environment) is there to be held. A few
sessions are opened first so one-time costs (first imports, caches, the first pydantic
validators) are not counted; each open waits for the session's `usage_update`, the last
update an open sends, so its work is done when RSS is read. The detail of the first row
also gives the growth counted from the `initialize` answer, one-time costs included. Another
row gives the whole RSS after 100 `session/new` from spawn (fresh database), one-time costs
and all: what a user's process holds.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, StdioAgent, median, print_table

WARM_UP = 5
SETTLE = 1.0  # seconds
MESSAGES = 20  # per stored session: TURNS turns, every other one with a tool call
TURNS = 7


def _usage_updates(agent: StdioAgent) -> set[str]:
    return {
        n["params"]["sessionId"]
        for n in list(agent.notifications)
        if n["params"]["update"]["sessionUpdate"] == "usage_update"
    }


def _wait_announced(agent: StdioAgent, session_ids: list[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not set(session_ids) <= _usage_updates(agent):
        if time.monotonic() > deadline:
            raise TimeoutError("sessions were not announced")
        time.sleep(0.01)


def _settle(agent: StdioAgent) -> int:
    """RSS once the process is idle (background threads, e.g. the model warm-up, done)."""
    time.sleep(SETTLE)
    return agent.rss_kib()


def _open_all(agent: StdioAgent, method: str, params: list[dict[str, Any]]) -> list[str]:
    ids = [agent.call(method, p).get("sessionId") or p["sessionId"] for p in params]
    _wait_announced(agent, ids)
    return ids


def _growth_per_session(
    home: Path, cwd: Path, method: str, warm: list[dict[str, Any]], measured: list[dict[str, Any]]
) -> tuple[float, float]:
    """KiB of RSS per measured session: after the warm-up, and from `initialize` on."""
    with StdioAgent(home, cwd) as agent:
        agent.call("initialize", {"protocolVersion": 1})
        at_initialize = agent.rss_kib()
        _open_all(agent, method, warm)
        before = _settle(agent)
        _open_all(agent, method, measured)
        after = _settle(agent)
    return (after - before) / len(measured), (after - at_initialize) / len(measured)


def project(root: Path) -> Path:
    """A small git repository: an 8 KB AGENTS.md, a skill, 30 files, one of them changed."""
    root.mkdir()
    (root / "AGENTS.md").write_text("# Rules\n" + "- Keep functions short and typed.\n" * 240)
    skill = root / ".iac-code" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release of the project\n---\nSteps.\n"
    )
    for i in range(30):
        (root / f"module_{i}.py").write_text(f"x = {i}\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *command], cwd=root, check=True, env=env)
    (root / "module_0.py").write_text("x = 'changed'\n")
    return root


def seed(home: Path, cwd: str, count: int) -> list[str]:
    """`count` stored sessions in `cwd` of MESSAGES messages each (every other turn a tool
    call), written directly with the persistence mappers."""
    from bench.stored import T0, demo_session, history, store

    sessions = []
    for i in range(count):
        messages, records = history(TURNS, prefix=f"{i}_", tool_every=2)
        session = demo_session(
            f"sess_{i:04d}", cwd, f"Session {i}", messages, T0 + timedelta(minutes=i)
        )
        sessions.append((session, records))
    store(f"sqlite+aiosqlite:///{home / 'iac-code.db'}", sessions)
    return [f"sess_{i:04d}" for i in range(count)]


def by_new(sessions: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp, "home"), project(Path(tmp, "project"))
        home.mkdir()
        params = {"cwd": str(cwd), "mcpServers": []}
        return _growth_per_session(
            home, cwd, "session/new", [params] * WARM_UP, [params] * sessions
        )


def rss_after_new(sessions: int) -> float:
    """MiB of RSS once `sessions` session/new from spawn are answered, announced and idle."""
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp, "home"), project(Path(tmp, "project"))
        home.mkdir()
        with StdioAgent(home, cwd) as agent:
            agent.call("initialize", {"protocolVersion": 1})
            _open_all(agent, "session/new", [{"cwd": str(cwd), "mcpServers": []}] * sessions)
            return _settle(agent) / 1024


def by_load(sessions: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp, "home"), project(Path(tmp, "project"))
        home.mkdir()
        ids = seed(home, str(cwd), WARM_UP + sessions)
        params = [{"sessionId": sid, "cwd": str(cwd), "mcpServers": []} for sid in ids]
        return _growth_per_session(home, cwd, "session/load", params[:WARM_UP], params[WARM_UP:])[0]


def measure(runs: int = 3, sessions: int = 100) -> list[Row]:
    new, cold = zip(*(by_new(sessions) for _ in range(runs)), strict=True)
    load = [by_load(sessions) for _ in range(runs)]
    rss = [rss_after_new(sessions) for _ in range(runs)]
    return [
        Row(
            f"RSS after {sessions} session/new from spawn",
            median(rss),
            "MiB",
            60,
            f"runs: {', '.join(f'{v:.0f}' for v in rss)}",
        ),
        Row(
            f"memory per open idle session ({sessions} session/new)",
            median(list(new)),
            "KiB",
            200,
            f"runs: {', '.join(f'{v:.1f}' for v in new)}; "
            f"from initialize on: {median(list(cold)):.0f}",
        ),
        Row(
            f"the same, {sessions} session/load of {MESSAGES} messages",
            median(load),
            "KiB",
            200,
            f"runs: {', '.join(f'{v:.1f}' for v in load)}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print_table(measure(args.runs, args.sessions))


if __name__ == "__main__":
    main()
