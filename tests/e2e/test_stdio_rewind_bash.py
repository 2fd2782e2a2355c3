"""A rewind puts back what `bash` changed, byte for byte, in any directory: the real process,
a scripted Messages API running the commands. Finding 3 of the rewind review: outside a git
repository (and for files git does not track) the prior bytes of the files a command
changed were not known, so they were left as the command left them."""

from pathlib import Path

import pytest

from tests.e2e.conftest import Spawn, anthropic_env
from tests.e2e.test_stdio_rewind import REWIND, call, valid_on_the_wire
from tests.e2e.test_stdio_rewind_files import bash, committed, edit, turn, write
from tests.e2e.test_stdio_rewind_safety import opened, to, tree
from tests.support.scripted_anthropic import ScriptedAnthropic

pytestmark = pytest.mark.e2e


async def test_a_rewind_restores_what_bash_changed_in_a_plain_directory(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 3: outside a git repository the files `bash` appended to or deleted were
    left as the command left them (their prior bytes were not known)."""
    (workdir / "keep.txt").write_bytes(b"keep\r\n")
    (workdir / "del.txt").write_bytes(b"to delete\n")
    (workdir / "sub").mkdir()
    (workdir / "sub" / "deep.txt").write_bytes("deep \u00e9\n".encode())
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir, mode="default")
        await turn(agent, server, sid, "one", write("a.txt", "a one\n"))
        before_two = tree(workdir)
        await turn(agent, server, sid, "two", edit("a.txt", "one", "two"))
        command = (
            "printf 'more' >> keep.txt && rm del.txt && printf 'more' >> sub/deep.txt"
            " && mkdir -p sub/new && printf 'new' > sub/new/made.txt"
        )
        await turn(agent, server, sid, "three", bash(command))
        assert "del.txt" not in tree(workdir)

        agent.client.answers = ["allow_once"]
        to_two = await to(agent, sid, workdir, "two")
        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=to_two, files="restore")
        assert rewound["files"]["notRestorable"] == []
        assert tree(workdir) == before_two
    valid_on_the_wire(agent)


async def test_an_untracked_file_bash_changed_in_a_git_repository_is_restored(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Finding 3, in a repository: a file git does not track was `prior_unknown`."""
    committed(workdir, **{"tracked.txt": "tracked\n"})
    (workdir / "notes.txt").write_text("untracked notes\n")
    async with spawn(anthropic_env(server)) as agent:
        sid = await opened(agent, workdir, mode="default")
        before = tree(workdir)
        await turn(agent, server, sid, "one", bash("printf ' and more' >> notes.txt"))
        agent.client.answers = ["allow_once"]
        to_one = await to(agent, sid, workdir, "one")
        rewound = await call(agent, REWIND, sessionId=sid, toMessageId=to_one, files="restore")
        assert rewound["files"]["restored"] == [str(workdir / "notes.txt")]
        assert tree(workdir) == before
    valid_on_the_wire(agent)
