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
also gives the growth counted from the `initialize` answer, one-time costs included.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, StdioAgent, median, print_table

WARM_UP = 5
SETTLE = 1.0  # seconds
MESSAGES = 20  # per stored session
T0 = datetime(2026, 1, 1, tzinfo=UTC)


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


def stored_history(index: int) -> tuple[list[Any], list[Any]]:
    """One stored session's MESSAGES messages, user and assistant turns, every other turn
    reading a file through a tool call, and the tool calls as they were shown."""
    from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
    from domain.ids import MessageId, ToolCallId
    from domain.message import Message, Role
    from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus, ToolKind

    history: list[Message] = []
    records: list[ToolCallRecord] = []

    def add(role: Role, *blocks: object) -> None:
        history.append(
            Message(
                id=MessageId(f"m{index}_{len(history)}"),
                role=role,
                content=tuple(blocks),  # type: ignore[arg-type]
                created_at=T0 + timedelta(seconds=len(history)),
            )
        )

    turn = 0
    while len(history) < MESSAGES:
        add(Role.USER, TextBlock(text=f"Question {turn}: what does module {turn} do?"))
        if turn % 2 and len(history) + 3 <= MESSAGES:
            use_id = f"toolu_{index}_{turn}"
            arguments = {"path": f"module_{turn}.py"}
            add(
                Role.ASSISTANT,
                TextBlock(text=f"Let me read module {turn}."),
                ToolUseBlock(id=use_id, name="read_file", input=arguments),
            )
            add(Role.USER, ToolResultBlock(tool_use_id=use_id, content="x = 1\n" * 20))
            records.append(
                ToolCallRecord(
                    id=ToolCallId(use_id),
                    name="read_file",
                    title=f"Read module_{turn}.py",
                    kind=ToolKind.READ,
                    arguments=arguments,
                    status=ToolCallStatus.COMPLETED,
                    output=(TextOutput(text="x = 1\n" * 20),),
                )
            )
        add(Role.ASSISTANT, TextBlock(text=f"Module {turn} sets x to 1. " * 5))
        turn += 1
    return history, records


def seed(home: Path, cwd: str, count: int) -> list[str]:
    """`count` stored sessions in `cwd`, written directly with the persistence mappers."""
    from sqlalchemy import create_engine, insert

    from adapters.persistence import tables
    from adapters.persistence.mappers import message_to_row, session_to_row, tool_call_to_row
    from adapters.persistence.migrate import upgrade_to_head
    from domain.ids import SessionId
    from domain.session import Session

    url = f"sqlite+aiosqlite:///{home / 'iac-code.db'}"
    upgrade_to_head(url)
    sessions, messages, calls = [], [], []
    for i in range(count):
        history, records = stored_history(i)
        session = Session(
            id=SessionId(f"sess_{i:04d}"),
            cwd=cwd,
            created_at=T0,
            model="demo",
            title=f"Session {i}",
            messages=history,
            updated_at=T0 + timedelta(minutes=i),
        )
        sessions.append(session_to_row(session))
        messages.extend(message_to_row(session.id, n, m) for n, m in enumerate(history))
        calls.extend(tool_call_to_row(session.id, record) for record in records)
    engine = create_engine(url.replace("+aiosqlite", ""))
    with engine.begin() as db:
        db.execute(insert(tables.sessions), sessions)
        db.execute(insert(tables.messages), messages)
        db.execute(insert(tables.tool_calls), calls)
    engine.dispose()
    return [f"sess_{i:04d}" for i in range(count)]


def by_new(sessions: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp, "home"), project(Path(tmp, "project"))
        home.mkdir()
        params = {"cwd": str(cwd), "mcpServers": []}
        return _growth_per_session(
            home, cwd, "session/new", [params] * WARM_UP, [params] * sessions
        )


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
    return [
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
