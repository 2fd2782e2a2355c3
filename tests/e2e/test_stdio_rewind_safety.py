"""What a restoring rewind and its undo must never do, on the real process: write or delete
through a symlink the user put where the agent left a file or a directory (the write would
land outside the workspace), or overwrite what the user changed after the rewind. Each test
is named after the finding it holds (what `bash` changed: test_stdio_rewind_bash.py)."""

from pathlib import Path

import pytest
from acp import RequestError

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.e2e.test_stdio_rewind import REWIND, UNDO, call, prompt_id, transcript, valid_on_the_wire
from tests.e2e.test_stdio_rewind_command import slash
from tests.e2e.test_stdio_rewind_files import edit, turn, write
from tests.support.scripted_anthropic import ScriptedAnthropic

pytestmark = pytest.mark.e2e

NOT_A_FILE = "not_a_regular_file"


def tree(directory: Path) -> dict[str, bytes]:
    """Every regular file below `directory` (not through symlinks, not git's own), by
    relative path."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and not _through_link(p, directory)
        and ".git" not in p.relative_to(directory).parts
    }


def _through_link(path: Path, top: Path) -> bool:
    return any(parent.is_symlink() for parent in path.parents if parent.is_relative_to(top))


async def opened(agent: Agent, workdir: Path, mode: str = "accept_edits") -> str:
    await agent.initialize()
    sid: str = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
    await agent.conn.set_session_mode(session_id=sid, mode_id=mode)
    return sid


async def to(agent: Agent, sid: str, workdir: Path, words: str) -> str:
    return prompt_id(await transcript(agent, sid, workdir), words)


async def test_a_restore_never_writes_through_a_symlink_the_user_put_in_place_of_a_file(
    spawn: Spawn, tmp_path: Path, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 1(a): the symlink reads as the agent left it (same content), so the conflict
    check passed and the restore wrote the file outside."""
    outside = tmp_path / "outside.txt"
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir)
        await turn(agent, server, sid, "one", write("a.txt", "one\n"))
        await turn(agent, server, sid, "two", edit("a.txt", "one", "two"))
        outside.write_text("two\n")  # what the agent left, byte for byte
        (workdir / "a.txt").unlink()
        (workdir / "a.txt").symlink_to(outside)
        to_two = await to(agent, sid, workdir, "two")

        with pytest.raises(RequestError) as refused:  # a symlink is a conflict
            await call(agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert refused.value.code == -32602
        assert refused.value.data["conflicts"] == [str(workdir / "a.txt")]
        forced = await call(
            agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore", force=True
        )
        assert forced["files"]["notRestorable"] == [
            {"path": str(workdir / "a.txt"), "reason": NOT_A_FILE}
        ]
        assert outside.read_text() == "two\n"
        assert (workdir / "a.txt").is_symlink()
    valid_on_the_wire(agent)


async def test_a_restore_never_deletes_through_a_symlinked_directory(
    spawn: Spawn, tmp_path: Path, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 1(b): the file a turn created sat in a directory the user then replaced by a
    symlink to a directory outside; removing the created file removed the outside one."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir)
        await turn(agent, server, sid, "one", write("d/made.txt", "made\n"))
        (workdir / "d" / "made.txt").unlink()
        (workdir / "d").rmdir()
        (workdir / "d").symlink_to(elsewhere, target_is_directory=True)
        (elsewhere / "made.txt").write_text("the user's file outside\n")
        to_one = await to(agent, sid, workdir, "one")

        forced = await call(
            agent, REWIND, sessionId=sid, toMessageId=to_one, files="restore", force=True
        )
        assert forced["files"]["notRestorable"] == [
            {"path": str(workdir / "d" / "made.txt"), "reason": NOT_A_FILE}
        ]
        assert (elsewhere / "made.txt").read_text() == "the user's file outside\n"
    valid_on_the_wire(agent)


async def test_a_restore_never_overwrites_through_a_symlinked_directory(
    spawn: Spawn, tmp_path: Path, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 1(c): the same with a file the turn edited: the outside one was overwritten."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workdir / "d").mkdir()
    (workdir / "d" / "e.txt").write_text("e before\n")
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir)
        await turn(agent, server, sid, "one", edit("d/e.txt", "before", "after"))
        (workdir / "d" / "e.txt").unlink()
        (workdir / "d").rmdir()
        (workdir / "d").symlink_to(elsewhere, target_is_directory=True)
        (elsewhere / "e.txt").write_text("e after\n")  # even what the agent left
        to_one = await to(agent, sid, workdir, "one")

        with pytest.raises(RequestError) as refused:
            await call(agent, REWIND, sessionId=sid, toMessageId=to_one, files="restore")
        assert refused.value.data["conflicts"] == [str(workdir / "d" / "e.txt")]
        await call(agent, REWIND, sessionId=sid, toMessageId=to_one, files="restore", force=True)
        assert (elsewhere / "e.txt").read_text() == "e after\n"
    valid_on_the_wire(agent)


async def test_an_undo_never_writes_through_a_symlink(
    spawn: Spawn, tmp_path: Path, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 1, the undo's path: it wrote the restored files back through whatever stood
    there."""
    outside = tmp_path / "outside.txt"
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir)
        await turn(agent, server, sid, "one", write("a.txt", "one\n"))
        await turn(agent, server, sid, "two", edit("a.txt", "one", "two"))
        to_two = await to(agent, sid, workdir, "two")
        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert (workdir / "a.txt").read_text() == "one\n"
        outside.write_text("one\n")
        (workdir / "a.txt").unlink()
        (workdir / "a.txt").symlink_to(outside)

        with pytest.raises(RequestError) as refused:
            await call(agent, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert refused.value.data["conflicts"] == [str(workdir / "a.txt")]
        answer = await slash(agent, sid, "/rewind undo force")
        assert "undone" in answer and "Not restorable: " + str(workdir / "a.txt") in answer
        assert outside.read_text() == "one\n" and (workdir / "a.txt").is_symlink()
    valid_on_the_wire(agent)


async def test_an_undo_refuses_to_overwrite_what_the_user_changed_after_the_rewind(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 2: the undo overwrote the user's edits made after the rewind, unasked and
    untold; it now refuses as the rewind does, and takes force or skip as the rewind does."""
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir)
        await turn(agent, server, sid, "one", write("a.txt", "one\n"), write("b.txt", "b1\n"))
        await turn(agent, server, sid, "two", write("a.txt", "two\n"), write("b.txt", "b2\n"))
        to_two = await to(agent, sid, workdir, "two")
        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        (workdir / "a.txt").write_text("the user's work after the rewind\n")

        with pytest.raises(RequestError) as refused:
            await call(agent, UNDO, sessionId=sid, undoToken=rewound["undoToken"])
        assert refused.value.code == -32602
        assert refused.value.data["conflicts"] == [str(workdir / "a.txt")]
        assert refused.value.data["resolve"] == ["force", "skip"]
        assert tree(workdir) == {"a.txt": b"the user's work after the rewind\n", "b.txt": b"b1\n"}
        assert [s for *_, s in await transcript(agent, sid, workdir)][-1] == "done: one"

        answer = await slash(agent, sid, "/rewind undo skip")
        assert "undone" in answer
        assert "Left as you changed them: " + str(workdir / "a.txt") in answer
        assert tree(workdir) == {"a.txt": b"the user's work after the rewind\n", "b.txt": b"b2\n"}
        assert [s for *_, s in await transcript(agent, sid, workdir)][-1] == "done: two"

        # Over the extension method too: rewound again, changed again, the undo forced.
        again = await call(
            agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore", force=True
        )
        (workdir / "a.txt").write_text("changed once more\n")
        forced = await call(agent, UNDO, sessionId=sid, undoToken=again["undoToken"], force=True)
        assert forced["files"]["restored"] == sorted(
            [str(workdir / "a.txt"), str(workdir / "b.txt")]
        )
        # What the rewind overwrote is back: the user's work of before it, and b2.
        assert tree(workdir) == {"a.txt": b"the user's work after the rewind\n", "b.txt": b"b2\n"}
    valid_on_the_wire(agent)
