"""A rewind that restores files (`files: "restore"`): the real process, the official client,
a scripted Messages API writing and editing files. The pinned SDK has no rewind method, so
it is sent as a raw request; every message of each run is validated against the newest
(unstable) schema file."""

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.e2e.test_stdio_rewind import REWIND, UNDO, call, prompt_id, transcript, valid_on_the_wire
from tests.e2e.test_stdio_rewind_command import slash
from tests.support.postgres import scratch_database
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

EDIT = "_iac_code/session/edit_prompt"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The session store the processes share: SQLite (the default file) or PostgreSQL."""
    if request.param == "sqlite":
        yield {}
        return
    with scratch_database("rewind_files") as url:  # new and empty: the first process migrates it
        yield {"IAC_CODE_DATABASE_URL": url}


def files_of(workdir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(workdir.iterdir()) if p.is_file()}


async def turn(agent: Agent, server: ScriptedAnthropic, sid: str, words: str, *uses: Any) -> None:
    """A prompt whose answer runs the tool calls `uses` (each allowed once), then says done."""
    server.script(stream(*uses, stop_reason="tool_use"), stream(text(f"done: {words}")))
    agent.client.answers = ["allow_once"] * len(uses)
    result = await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
    assert result.stop_reason == "end_turn"


def write(path: str, content: str) -> Any:
    return tool_use("write_file", {"path": path, "content": content})


def edit(path: str, old: str, new: str) -> Any:
    return tool_use("edit_file", {"path": path, "old_string": old, "new_string": new})


def bash(command: str) -> Any:
    return tool_use("bash", {"command": command})


def committed(workdir: Path, **files: str) -> None:
    """The workdir as a git repository holding `files` (name: text), committed."""
    for name, content in files.items():
        (workdir / name).write_text(content)
    git = ["git", "-C", str(workdir), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)


async def three_turns(agent: Agent, server: ScriptedAnthropic, workdir: Path) -> str:
    """Turns that write, edit, then edit and run a command that deletes a tracked file and
    creates another."""
    await agent.initialize()
    sid: str = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
    await turn(agent, server, sid, "one", write("a.txt", "a one\r\n"))
    await turn(agent, server, sid, "two", edit("a.txt", "one", "two"), write("new.txt", "new\n"))
    await turn(
        agent,
        server,
        sid,
        "three",
        edit("keep.txt", "kept", "changed"),
        bash("rm gone.txt && printf 'by bash' > bashed.txt"),
    )
    return sid


async def test_a_restoring_rewind_puts_the_files_back_and_survives_a_kill(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, store: dict[str, str]
) -> None:
    committed(workdir, **{"keep.txt": "kept\n\u00e9\n", "gone.txt": "tracked\n"})
    env = anthropic_env(server, **store)
    async with spawn(env) as first:
        sid = await three_turns(first, server, workdir)
        assert files_of(workdir) == {
            "a.txt": b"a two\r\n",
            "bashed.txt": b"by bash",
            "keep.txt": "changed\n\u00e9\n".encode(),
            "new.txt": b"new\n",
        }
        after_three = files_of(workdir)
        first.kill()  # the checkpoints were written before: a new process uses them
    valid_on_the_wire(first)

    async with spawn(env) as second:
        await second.initialize()
        shown = await transcript(second, sid, workdir)
        to_two = prompt_id(shown, "two")
        second.client.answers = ["reject_once"]  # the default mode asks first
        with pytest.raises(RequestError) as declined:
            await call(second, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert declined.value.code == -32602
        assert files_of(workdir) == after_three
        ((asked, options),) = second.client.permission_requests
        assert [o.option_id for o in options] == ["allow_once", "reject_once"]
        diffs = {c.path: (c.old_text, c.new_text) for c in asked.content}
        assert diffs[str(workdir / "a.txt")] == ("a two\r\n", "a one\r\n")
        assert diffs[str(workdir / "new.txt")] == ("new\n", "")  # created: removed
        assert diffs[str(workdir / "gone.txt")] == (None, "tracked\n")  # deleted: recreated
        assert len(asked.locations) == 5

        second.client.answers = ["allow_once"]
        rewound = await call(second, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert rewound["messageCount"] == 4  # the first turn: prompt, tool use, result, reply
        assert sorted(rewound["files"]["restored"]) == [
            str(workdir / name)
            for name in ("a.txt", "bashed.txt", "gone.txt", "keep.txt", "new.txt")
        ]
        assert (rewound["files"]["skipped"], rewound["files"]["notRestorable"]) == ([], [])
        # The state before the second prompt, byte for byte: the created files are gone,
        # the file the command deleted is back.
        assert files_of(workdir) == {
            "a.txt": b"a one\r\n",
            "gone.txt": b"tracked\n",
            "keep.txt": "kept\n\u00e9\n".encode(),
        }
        second.client.answers = ["allow_once"]  # the undo writes files too: asked alike
        await call(second, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert files_of(workdir) == after_three
        (undo_asked, _) = second.client.permission_requests[-1]
        assert undo_asked.tool_call_id == f"rewind_undo_{rewound['undoToken']}"
        assert len(undo_asked.locations) == 5
    valid_on_the_wire(second)


async def test_the_undo_of_a_restoring_rewind_survives_a_kill(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, store: dict[str, str]
) -> None:
    committed(workdir, **{"keep.txt": "kept\n\u00e9\n", "gone.txt": "tracked\n"})
    env = anthropic_env(server, **store)
    async with spawn(env) as first:
        sid = await three_turns(first, server, workdir)
        after_three = files_of(workdir)
        shown = await transcript(first, sid, workdir)
        first.client.answers = ["allow_once"]
        rewound = await call(
            first, REWIND, sessionId=sid, toMessageId=prompt_id(shown, "two"), files="restore"
        )
        assert files_of(workdir) != after_three
        first.kill()  # the undo was stored with the cut: a new process can still undo
    valid_on_the_wire(first)

    async with spawn(env) as second:
        await second.initialize()
        assert [said for *_, said in await transcript(second, sid, workdir)][-1] == "done: one"
        second.client.answers = ["allow_once"]
        undone = await call(second, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert undone["messageCount"] == 12  # three turns: prompt, tool use, result, reply
        # It answers the files it put back: every one the rewind had put back, none refused.
        assert sorted(undone["files"]["restored"]) == sorted(rewound["files"]["restored"])
        assert len(undone["files"]["restored"]) == 5  # a, bashed, gone, keep, new .txt
        assert undone["files"]["skipped"] == [] and undone["files"]["notRestorable"] == []
        assert files_of(workdir) == after_three
        assert await transcript(second, sid, workdir) == shown
        with pytest.raises(RequestError) as twice:  # spent: once only
            await call(second, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert twice.value.code == -32602
    valid_on_the_wire(second)


async def test_the_slash_command_restores_the_files_and_undoes_the_restore(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    committed(workdir, **{"keep.txt": "kept\n", "gone.txt": "tracked\n"})
    async with spawn(anthropic_env(server)) as agent:
        sid = await three_turns(agent, server, workdir)
        after_three = files_of(workdir)
        assert (await slash(agent, sid, "/rewind 2")).startswith("Rewound")  # files kept
        assert files_of(workdir) == after_three
        await slash(agent, sid, "/rewind undo")

        agent.client.answers = ["allow_once"]  # restoring asks, as the method does
        asked_before = len(agent.client.permission_requests)
        answer = await slash(agent, sid, "/rewind 2 restore")
        assert "Files restored: 5." in answer
        assert files_of(workdir) == {
            "a.txt": b"a one\r\n",
            "gone.txt": b"tracked\n",
            "keep.txt": b"kept\n",
        }
        [(asked, _)] = agent.client.permission_requests[asked_before:]  # one ask, for all
        assert asked.tool_call_id.startswith("rewind_restore_")
        agent.client.answers = ["allow_once"]
        assert "undone" in await slash(agent, sid, "/rewind undo")
        assert files_of(workdir) == after_three
    valid_on_the_wire(agent)


async def test_a_file_the_user_changed_is_reported_and_left_when_skipped(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    committed(workdir, **{"keep.txt": "kept\n", "gone.txt": "tracked\n"})
    async with spawn(anthropic_env(server)) as agent:
        sid = await three_turns(agent, server, workdir)
        (workdir / "new.txt").write_text("the user's own words\n")
        to_two = prompt_id(await transcript(agent, sid, workdir), "two")
        with pytest.raises(RequestError) as refused:
            await call(agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert refused.value.code == -32602
        assert refused.value.data["conflicts"] == [str(workdir / "new.txt")]
        assert refused.value.data["resolve"] == ["force", "skip"]
        assert (workdir / "new.txt").read_text() == "the user's own words\n"
        assert [s for _, _, s in await transcript(agent, sid, workdir)][-1] == "done: three"

        agent.client.answers = ["allow_once"]
        skipped = await call(
            agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore", skip=True
        )
        assert skipped["files"]["skipped"] == [str(workdir / "new.txt")]
        assert files_of(workdir) == {
            "a.txt": b"a one\r\n",
            "gone.txt": b"tracked\n",
            "keep.txt": b"kept\n",
            "new.txt": b"the user's own words\n",
        }
    valid_on_the_wire(agent)


async def test_the_checkpoint_limit_drops_the_oldest_first_with_a_notice(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "big1.txt").write_text("1" * 60)
    (workdir / "big2.txt").write_text("2" * 60)
    env = anthropic_env(server, IAC_CODE_CHECKPOINT_MAX_BYTES="100")
    async with spawn(env) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await turn(agent, server, sid, "one", write("big1.txt", "small"))
        assert "checkpoints dropped" not in agent.client.agent_text()
        await turn(agent, server, sid, "two", write("big2.txt", "small"))
        assert "Older file checkpoints dropped" in agent.client.agent_text()

        to_one = prompt_id(await transcript(agent, sid, workdir), "one")
        agent.client.answers = ["allow_once"]
        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=to_one, files="restore")
        assert rewound["files"]["notRestorable"] == [
            {"path": str(workdir / "big1.txt"), "reason": "dropped"}
        ]
        assert rewound["files"]["restored"] == [str(workdir / "big2.txt")]
        assert files_of(workdir) == {"big1.txt": b"small", "big2.txt": b"2" * 60}
    valid_on_the_wire(agent)


async def test_edit_prompt_restores_the_files_then_runs_the_new_text_and_plan_mode_refuses(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await turn(agent, server, sid, "one", write("a.txt", "1"))
        await turn(agent, server, sid, "two", write("a.txt", "2"), write("b.txt", "b"))
        to_two = prompt_id(await transcript(agent, sid, workdir), "two")
        edit = {"sessionId": sid, "messageId": to_two, "files": "restore"}

        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        with pytest.raises(RequestError) as refused:
            await call(agent, EDIT, **edit, prompt=[{"type": "text", "text": "TWO"}])
        assert (refused.value.code, refused.value.data["modeId"]) == (-32602, "plan")
        assert files_of(workdir) == {"a.txt": b"2", "b.txt": b"b"}

        await agent.conn.set_session_mode(session_id=sid, mode_id="accept_edits")
        asked = len(agent.client.permission_requests)
        server.script(stream(text("re: TWO")))
        answer = await call(agent, EDIT, **edit, prompt=[{"type": "text", "text": "TWO"}])
        assert answer["stopReason"] == "end_turn"
        assert len(agent.client.permission_requests) == asked  # accept_edits: not asked
        assert files_of(workdir) == {"a.txt": b"1"}
        shown = [said for _, _, said in await transcript(agent, sid, workdir)]
        assert shown[-2:] == ["TWO", "re: TWO"] and "two" not in shown
    valid_on_the_wire(agent)
