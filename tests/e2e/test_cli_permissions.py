"""`iac-code permissions list|revoke|clear`: the real binary on a database holding rules."""

import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from acp import text_block
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.persistence.migrate import upgrade_to_head
from adapters.persistence.sqlite import make_sqlite_engine
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from domain.project_rules import ProjectRule, rule_for
from tests.e2e.conftest import IAC_CODE, Spawn, anthropic_env
from tests.factories import T0
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    StreamReply,
    stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e


def cli(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IAC_CODE, "permissions", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={
            "PATH": os.environ["PATH"],
            "IAC_CODE_CONFIG_DIR": str(home),
            "IAC_CODE_PROVIDER": "demo",
        },
        check=False,
    )


def listed(home: Path) -> list[dict[str, object]]:
    result = cli("list", "--json", home=home)
    assert result.returncode == 0, result.stderr
    rules: list[dict[str, object]] = json.loads(result.stdout)
    return rules


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def other(tmp_path: Path) -> Path:
    path = tmp_path / "other"
    path.mkdir()
    return path


async def store(home: Path, *rules: ProjectRule) -> list[ProjectRule]:
    url = f"sqlite+aiosqlite:///{home / 'iac-code.db'}"
    upgrade_to_head(url)
    engine = make_sqlite_engine(url)
    try:
        uow = SqlAlchemyUnitOfWork(async_sessionmaker(engine, expire_on_commit=False))
        async with uow:
            stored = [await uow.rules.add(r) for r in rules]
            await uow.commit()
    finally:
        await engine.dispose()
    return stored


def grant(cwd: Path, tool: str, command: str | None = None, minute: int = 0) -> ProjectRule:
    rule = rule_for(
        cwd=str(cwd),
        tool_name=tool,
        arguments={} if command is None else {"command": command},
        at=T0 + timedelta(minutes=minute),
        session_id="sess_1" if minute < 2 else None,
    )
    assert rule is not None
    return rule


@pytest.fixture
async def rules(home: Path, workdir: Path, other: Path) -> list[ProjectRule]:
    return await store(
        home,
        grant(workdir, "write_file"),
        grant(workdir, "bash", "git status -s", minute=1),
        grant(other, "bash", "ls -la", minute=2),
    )


def test_list_is_a_readable_table_of_what_each_rule_covers(
    home: Path, workdir: Path, other: Path, rules: list[ProjectRule]
) -> None:
    result = cli("list", home=home)
    assert result.returncode == 0, result.stderr
    header, *lines = result.stdout.splitlines()
    assert header.split() == ["ID", "PROJECT", "TOOL", "COVERS", "GRANTED", "(UTC)", "SESSION"]
    write, git, ls = rules
    # by project, then age: "other" sorts before "project"
    assert lines[0].split()[:3] == [str(ls.id), str(other), "bash"]
    assert "exactly `ls -la`" in lines[0] and lines[0].endswith("2026-01-01 00:02  -")
    assert lines[1].split()[:3] == [str(write.id), str(workdir), "write_file"]
    assert "every call" in lines[1] and lines[1].endswith("2026-01-01 00:00  sess_1")
    assert lines[2].split()[:3] == [str(git.id), str(workdir), "bash"]
    assert "commands starting with `git status …`" in lines[2]
    assert len(lines) == 3


def test_list_json_for_one_project_given_as_a_relative_path(
    home: Path, workdir: Path, rules: list[ProjectRule]
) -> None:
    write, git, _ = rules
    result = cli("list", "--cwd", "project", "--json", home=home, cwd=workdir.parent)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        {
            "id": write.id,
            "cwd": str(workdir),
            "tool": "write_file",
            "command": None,
            "exact": None,
            "createdAt": "2026-01-01T00:00:00Z",
            "sessionId": "sess_1",
        },
        {
            "id": git.id,
            "cwd": str(workdir),
            "tool": "bash",
            "command": ["git", "status"],
            "exact": False,
            "createdAt": "2026-01-01T00:01:00Z",
            "sessionId": "sess_1",
        },
    ]


def test_revoke_removes_one_rule_and_an_unknown_id_fails_clearly(
    home: Path, workdir: Path, other: Path, rules: list[ProjectRule]
) -> None:
    write, git, ls = rules
    revoked = cli("revoke", str(git.id), home=home)
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout == (
        f"revoked {git.id}: bash, commands starting with `git status …`, in {workdir}\n"
    )
    as_json = cli("revoke", str(ls.id), "--json", home=home)
    assert json.loads(as_json.stdout)["command"] == ["ls", "-la"]
    assert [r["id"] for r in listed(home)] == [write.id]

    for again in (cli("revoke", str(git.id), home=home), cli("revoke", "999", "--json", home=home)):
        assert again.returncode == 1
        assert again.stdout == ""
        assert "iac-code: no remembered permission with id" in again.stderr
    assert [r["id"] for r in listed(home)] == [write.id]


def test_clear_removes_only_that_project(
    home: Path, workdir: Path, other: Path, rules: list[ProjectRule]
) -> None:
    cleared = cli("clear", "--cwd", str(workdir), "--json", home=home)
    assert cleared.returncode == 0, cleared.stderr
    assert json.loads(cleared.stdout) == {"cwd": str(workdir), "removed": 2}
    assert [r["cwd"] for r in listed(home)] == [str(other)]
    nothing = cli("clear", "--cwd", str(workdir), home=home)
    assert nothing.stdout == f"removed 0 remembered permission(s) of {workdir}\n"


def test_bad_arguments_are_usage_errors_and_change_nothing(
    home: Path, rules: list[ProjectRule]
) -> None:
    for args, complaint in (
        (("revoke", "first"), "invalid int value"),
        (("revoke",), "the following arguments are required: ID"),
        (("clear",), "the following arguments are required: --cwd"),
        (("clear", "--cwd", ""), "expected a directory"),
        (("list", "--cwd", " "), "expected a directory"),
    ):
        result = cli(*args, home=home)
        assert result.returncode == 2, args
        assert complaint in result.stderr, args
    assert len(listed(home)) == len(rules)


def test_no_rules_yet(home: Path) -> None:
    assert cli("list", home=home).stdout == "No remembered permissions.\n"
    assert listed(home) == []


async def test_a_rule_granted_in_a_session_is_listed_and_revoking_it_makes_it_ask_again(
    spawn: Spawn, workdir: Path, home: Path, server: ScriptedAnthropic
) -> None:
    def write(name: str) -> list[StreamReply]:
        return [
            stream(tool_use("write_file", {"path": name, "content": "x"}), stop_reason="tool_use"),
            stream(text("Written.")),
        ]

    server.script(*write("a.txt"), *write("b.txt"), *write("c.txt"))
    env = {**anthropic_env(server), "IAC_CODE_CONFIG_DIR": str(home)}

    async def prompt() -> int:
        """Asks the agent to write once; how many permission requests it has sent so far."""
        async with spawn(env) as agent:
            await agent.initialize()
            session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
            agent.client.answers = ["allow_always"]
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            return len(agent.client.permission_requests)

    assert await prompt() == 1  # asked, and "always" was answered
    (rule,) = listed(home)
    assert (rule["cwd"], rule["tool"], rule["command"]) == (str(workdir), "write_file", None)
    assert await prompt() == 0  # a new server, a new session: remembered
    assert cli("revoke", str(rule["id"]), home=home).returncode == 0
    assert await prompt() == 1  # forgotten: it asks again
    assert [(workdir / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == ["x"] * 3
