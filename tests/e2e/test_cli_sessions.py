"""`iac-code sessions import|list|show|rename|delete`, on a fixture in the reference system's
layout and on sessions a real server stored."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.conftest import DEMO, IAC_CODE, Spawn
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.e2e


def write_jsonl(path: Path, rows: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")


@pytest.fixture
def legacy(tmp_path: Path, workdir: Path) -> Path:
    root = tmp_path / "legacy"
    project = root / "projects" / "-some-project"
    new = project / "sess_new1"
    new.mkdir(parents=True)
    (new / "metadata.json").write_text(
        json.dumps(
            {
                "session_id": "sess_new1",
                "name": "Fix the parser",
                "cwd": str(workdir),
                "created_at": "2026-03-01T10:00:00Z",
                "updated_at": "2026-03-02T11:30:00Z",
            }
        )
    )
    write_jsonl(
        new / "session.jsonl",
        [
            {"role": "user", "content": "Why does the parser fail?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Look at it.", "signature": "sig"},
                    {"type": "text", "text": "Let me read it."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "read_file",
                        "input": {"path": "parser.py"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "def parse(): ..."}],
                    }
                ],
            },
            "{this line is corrupt",
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Now I will run the tests."},
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "bash",
                        "input": {"command": "pytest"},
                    },
                ],
            },  # crashed: no result
        ],
    )
    write_jsonl(
        project / "sess_old1.jsonl",
        [
            {"role": "user", "content": "An older session", "cwd": str(workdir)},
            {"role": "assistant", "content": "Older answer."},
        ],
    )
    january = 1767225600  # 2026-01-01T00:00:00Z: the older layout's times come from the file
    os.utime(project / "sess_old1.jsonl", (january, january))
    return root


def cli(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`iac-code *args`; in `cwd`, named in $PWD as a shell names it, if given."""
    return subprocess.run(
        [IAC_CODE, *args],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        cwd=cwd,
        env={
            "PATH": os.environ["PATH"],
            "IAC_CODE_CONFIG_DIR": str(home),
            "IAC_CODE_PROVIDER": "demo",
            **({"PWD": str(cwd)} if cwd is not None else {}),
        },
        check=False,
    )


async def test_import_is_idempotent_repairs_and_can_be_loaded(
    tmp_path: Path, legacy: Path, workdir: Path, spawn: Spawn
) -> None:
    home = tmp_path / "config"
    first = cli("sessions", "import", "--from", str(legacy), home=home)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == (
        "imported 2 session(s), 0 already present, 1 corrupt line(s) skipped"
    )
    again = cli("sessions", "import", "--from", str(legacy), home=home)
    assert "imported 0 session(s), 2 already present" in again.stdout

    listing = cli("sessions", "list", "--cwd", str(workdir), home=home)
    lines = listing.stdout.splitlines()
    assert lines[0].split()[:3] == ["ID", "UPDATED", "(UTC)"]
    assert lines[1].startswith("sess_new1") and "Fix the parser" in lines[1]
    assert "2026-03-02 11:30" in lines[1]
    assert lines[2].startswith("sess_old1") and "An older session" in lines[2]
    assert "2026-01-01 00:00" in lines[2]

    shown = cli("sessions", "show", "sess_new1", home=home)
    assert "> Why does the parser fail?" in shown.stdout
    assert "[tool] Read parser.py" in shown.stdout
    assert "[tool] Run `pytest`" in shown.stdout
    assert "failed: The tool did not finish" in shown.stdout
    assert cli("sessions", "show", "nope", home=home).returncode == 1
    renamed = cli("sessions", "rename", "sess_old1", "An older, renamed session", home=home)
    assert renamed.stdout == "sess_old1: An older, renamed session\n"
    assert "An older, renamed session" in cli("sessions", "list", home=home).stdout

    async with spawn({**DEMO, "IAC_CODE_CONFIG_DIR": str(home)}) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(workdir), session_id="sess_new1", mcp_servers=[])
        kinds = agent.client.kinds()
        assert kinds[:4] == [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
        ]
        result = await agent.conn.prompt(session_id="sess_new1", prompt=[text_block("go on")])
    assert result.stop_reason == "end_turn"


def test_list_with_no_sessions(tmp_path: Path) -> None:
    result = cli("sessions", "list", home=tmp_path / "empty")
    assert result.returncode == 0
    assert result.stdout == "No sessions.\n"


async def test_a_rename_from_the_cli_survives_the_servers_next_prompt(
    tmp_path: Path, workdir: Path, spawn: Spawn
) -> None:
    """The lost update of issue 12: the server held the session's old title in memory and
    its next prompt wrote it back over the rename."""
    home = tmp_path / "config"
    async with spawn({**DEMO, "IAC_CODE_CONFIG_DIR": str(home)}) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("Fix the login bug")])
        renamed = cli("sessions", "rename", sid, "Login work", home=home)
        assert renamed.returncode == 0, renamed.stderr
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("and logout")])
        assert result.stop_reason == "end_turn"
        listed = await agent.conn.list_sessions(cwd=str(workdir))
    assert [s.title for s in listed.sessions] == ["Login work"]
    [line] = cli("sessions", "list", home=home).stdout.splitlines()[1:]
    assert "Login work" in line


async def _sessions_in(home: Path, spawn: Spawn, *cwds: Path) -> list[str]:
    """One session stored per directory by a real server; their ids."""
    async with spawn({**DEMO, "IAC_CODE_CONFIG_DIR": str(home)}) as agent:
        await agent.initialize()
        return [
            (await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id for cwd in cwds
        ]


def test_finding_9_an_unknown_id_is_worded_alike_by_every_command(tmp_path: Path) -> None:
    """Issue #42, finding 9: show and rename worded an unknown id differently."""
    home = tmp_path / "config"
    answers = [
        cli("sessions", "show", "nope", home=home),
        cli("sessions", "rename", "nope", "x", home=home),
        cli("sessions", "delete", "nope", home=home),
    ]
    assert [a.returncode for a in answers] == [1, 1, 1]
    assert [a.stderr.splitlines()[-1] for a in answers] == ["iac-code: no session 'nope'"] * 3
    assert [a.stdout for a in answers] == ["", "", ""]


async def test_finding_9_sessions_delete_deletes_as_session_delete_does(
    tmp_path: Path, workdir: Path, spawn: Spawn
) -> None:
    home = tmp_path / "config"
    kept, gone = await _sessions_in(home, spawn, workdir, workdir)
    deleted = cli("sessions", "delete", gone, home=home)
    assert (deleted.returncode, deleted.stdout) == (0, f"deleted {gone}\n"), deleted.stderr
    listed = json.loads(cli("sessions", "list", "--json", home=home).stdout)
    assert [s["sessionId"] for s in listed] == [kept]
    assert cli("sessions", "show", gone, home=home).returncode == 1
    async with spawn({**DEMO, "IAC_CODE_CONFIG_DIR": str(home)}) as agent:  # the server too
        await agent.initialize()
        seen = await agent.conn.list_sessions(cwd=str(workdir))
    assert [s.session_id for s in seen.sessions] == [kept]


async def test_finding_9_sessions_list_json(tmp_path: Path, workdir: Path, spawn: Spawn) -> None:
    home = tmp_path / "config"
    [sid] = await _sessions_in(home, spawn, workdir)
    listed = cli("sessions", "list", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["sessionId"] == sid
    assert entry["cwd"] == str(workdir)
    assert (entry["title"], entry["messageCount"]) == (None, 0)
    assert entry["updatedAt"].startswith("20")
    assert json.loads(cli("sessions", "list", "--json", home=tmp_path / "empty").stdout) == []


async def test_finding_9_sessions_list_cwd_resolves_a_relative_directory(
    tmp_path: Path, workdir: Path, spawn: Spawn
) -> None:
    """`--cwd relative/dir` printed "No sessions.": the path is taken relative to the
    current directory as the shell names it, a symlink in it kept as the editor sent it."""
    home = tmp_path / "config"
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "link"
    link.symlink_to(workdir)
    plain, through_link, other = await _sessions_in(
        home, spawn, workdir, link, tmp_path / "elsewhere"
    )

    def listed(value: str, where: Path) -> list[str]:
        answer = cli("sessions", "list", "--json", "--cwd", value, home=home, cwd=where)
        assert answer.returncode == 0, answer.stderr
        return sorted(s["sessionId"] for s in json.loads(answer.stdout))

    assert listed(workdir.name, tmp_path) == [plain]
    assert listed(".", workdir) == [plain]
    assert listed("../elsewhere", workdir) == [other]
    assert listed("link", tmp_path) == sorted([plain, through_link])
