"""Sessions in worktrees of their own, through the real server and the official ACP client:
`session/new` with `_meta.iac_code.isolation = "worktree"` in a git repository answers
with the worktree; the model's command works there, sandboxed, not in the checkout the
editor opened; `session/list` shows it; a delete asks first while it holds unmerged work,
and takes it along once told to; a rewind inside it restores what `bash` changed."""

import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Spawn, anthropic_env
from tests.e2e.test_stdio_rewind import REWIND, call
from tests.e2e.test_stdio_rewind_files import bash, committed, turn
from tests.e2e.test_stdio_rewind_safety import to, tree
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e


def git(*arguments: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@pytest.fixture
def repository(workdir: Path) -> Path:
    committed(workdir, **{"app.py": "print('v1')\n"})
    return workdir


def ours(meta: dict[str, Any] | None) -> dict[str, Any]:
    return (meta or {}).get("iac_code") or {}


def read(path: Path) -> str:
    return path.read_text()


def exists(path: str) -> bool:
    return Path(path).exists()


async def test_a_session_in_its_own_worktree_from_new_to_delete(
    spawn: Spawn, repository: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(
            tool_use("bash", {"command": "echo \"print('v2')\" > app.py"}, id="toolu_sh"),
            stop_reason="tool_use",
        ),
        stream(text("edited")),
    )
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        await agent.initialize()
        new = await agent.conn.new_session(
            cwd=str(repository), mcp_servers=[], iac_code={"isolation": "worktree"}
        )
        sid = new.session_id
        worktree = ours(new.field_meta)["worktree"]
        assert worktree["branch"] == "iac-code/" + sid.removeprefix("sess_")[:8]
        assert worktree["base"] == git("rev-parse", "HEAD", cwd=repository)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("edit")])
        listed = await agent.conn.list_sessions()
        [entry] = [s for s in listed.sessions if s.session_id == sid]
        assert entry.cwd == worktree["path"]
        assert ours(entry.field_meta)["worktree"] == worktree
        with pytest.raises(RequestError) as refused:
            await agent.conn._conn.send_request("session/delete", {"sessionId": sid})
        assert refused.value.code == -32602
        assert refused.value.data["uncommitted"] == 1
        assert refused.value.data["confirm"] == "_meta.iac_code.discardWorktree"
        assert read(Path(worktree["path"], "app.py")) == "print('v2')\n"
        await agent.conn._conn.send_request(
            "session/delete", {"sessionId": sid, "_meta": {"iac_code": {"discardWorktree": True}}}
        )
    assert read(repository / "app.py") == "print('v1')\n"  # the editor's checkout, untouched
    assert not exists(worktree["path"])
    assert worktree["branch"] not in git("branch", "--list", cwd=repository)


async def test_asked_outside_a_repository_it_is_a_clear_error(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        with pytest.raises(RequestError) as refused:
            await agent.conn.new_session(
                cwd=str(workdir), mcp_servers=[], iac_code={"isolation": "worktree"}
            )
        with pytest.raises(RequestError) as wrong:
            await agent.conn.new_session(
                cwd=str(workdir), mcp_servers=[], iac_code={"isolation": "container"}
            )
    assert refused.value.code == -32602 and "not inside a git repository" in str(refused.value)
    assert wrong.value.code == -32602
    assert wrong.value.data["field"] == "_meta.iac_code.isolation"


async def test_a_rewind_inside_a_worktree_restores_what_sandboxed_bash_changed(
    spawn: Spawn, repository: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        new = await agent.conn.new_session(
            cwd=str(repository), mcp_servers=[], iac_code={"isolation": "worktree"}
        )
        sid, place = new.session_id, Path(ours(new.field_meta)["worktree"]["path"])
        await turn(agent, server, sid, "one", bash("echo one > notes.txt"))
        before_two = tree(place)
        await turn(agent, server, sid, "two", bash("echo two >> app.py && rm notes.txt"))
        assert "notes.txt" not in tree(place)
        agent.client.answers = ["allow_once"]
        to_two = await to(agent, sid, place, "two")
        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert rewound["files"]["notRestorable"] == []
        assert tree(place) == before_two
    assert read(repository / "app.py") == "print('v1')\n"  # the editor's checkout, untouched
