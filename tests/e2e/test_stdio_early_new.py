"""The first `session/new` of a restarted server is answered before its agent has loaded
(issue 34): stored with the standard library, then taken over by the agent before it
serves anything else. Driven with the official ACP client; the agent's load is held back
by a test-only `sitecustomize` (on PYTHONPATH) until the test lets it go, so the early path
is taken every run, whatever the machine's speed."""

import asyncio
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.conftest import DEMO, Spawn, until

pytestmark = pytest.mark.e2e

# Imported by the server's interpreter at start: the agent's container module (imported on
# its worker thread) waits, before it runs, until the file named by IAC_CODE_TEST_RELEASE
# exists. It waits in the module's execution, holding only that module's lock, as a slow
# module does: a finder that waited would hold the interpreter's global import lock (held
# around every finder's find_spec), and any other thread's first import of anything (the
# main thread answering at EOF) would wait for the release too.
HOLD = """
import importlib.machinery, os, sys, time


class _Held:
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        release = os.environ["IAC_CODE_TEST_RELEASE"]
        deadline = time.monotonic() + 120
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.01)
        self._loader.exec_module(module)


class _Hold:
    def find_spec(self, name, path=None, target=None):
        if name != "bootstrap.container":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None:
            spec.loader = _Held(spec.loader)
        return spec


sys.meta_path.insert(0, _Hold())
"""

EARLY = "session/new answered before the agent loaded"


def held(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment that holds the agent's load back, and the file that releases it."""
    hook = tmp_path / "hold"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOLD)
    release = tmp_path / "release"
    return {**DEMO, "PYTHONPATH": str(hook), "IAC_CODE_TEST_RELEASE": str(release)}, release


async def database_made(spawn: Spawn, workdir: Path) -> None:
    """A server run once before: the database exists, as on every start but the first."""
    async with spawn(DEMO) as first:
        await first.initialize()
        await first.conn.new_session(cwd=str(workdir), mcp_servers=[])


async def test_the_first_session_new_is_answered_early_and_the_agent_takes_it_over(
    spawn: Spawn, workdir: Path, tmp_path: Path
) -> None:
    await database_made(spawn, workdir)
    env, release = held(tmp_path)
    async with spawn(env) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert f"{EARLY}: {session.session_id}" in agent.stderr()
        assert session.modes is not None and session.modes.current_mode_id == "default"
        prompt = asyncio.ensure_future(
            agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        )
        await asyncio.sleep(0.2)
        assert not prompt.done()  # it waits for the agent, which is held
        assert agent.client.updates == []  # nothing follows the answer before the agent
        release.touch()
        result = await prompt
        listed = await agent.conn.list_sessions(cwd=str(workdir))
    assert result.stop_reason == "end_turn"
    kinds = [(sid, u.session_update) for sid, u in agent.client.updates]
    # The commands follow the answer, as they do for a session the agent makes itself.
    assert kinds[0] == (session.session_id, "available_commands_update")
    assert (session.session_id, "agent_message_chunk") in kinds
    assert session.session_id in [s.session_id for s in listed.sessions]


async def test_a_session_answered_early_survives_a_crash_before_the_agent_loads(
    spawn: Spawn, workdir: Path, tmp_path: Path
) -> None:
    await database_made(spawn, workdir)
    env, _release = held(tmp_path)  # never released: the agent never loads
    async with spawn(env) as doomed:
        await doomed.initialize()
        session = await doomed.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert EARLY in doomed.stderr()
        doomed.kill()
        await doomed.process.wait()
    async with spawn(DEMO) as after:
        await after.initialize()
        listed = await after.conn.list_sessions(cwd=str(workdir))
        assert session.session_id in [s.session_id for s in listed.sessions]
        await after.conn.load_session(
            cwd=str(workdir), session_id=session.session_id, mcp_servers=[]
        )
        result = await after.conn.prompt(
            session_id=session.session_id, prompt=[text_block("still here?")]
        )
        await until(lambda: "agent_message_chunk" in after.client.kinds(), after)
    assert result.stop_reason == "end_turn"


async def test_what_opens_more_than_a_cwd_is_left_to_the_agent(
    spawn: Spawn, workdir: Path, tmp_path: Path
) -> None:
    await database_made(spawn, workdir)
    env, release = held(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    async with spawn(env) as agent:
        await agent.initialize()
        making = asyncio.ensure_future(
            agent.conn.new_session(
                cwd=str(workdir), mcp_servers=[], additional_directories=[str(other)]
            )
        )
        await asyncio.sleep(0.2)
        assert not making.done()  # the agent answers it, once loaded
        release.touch()
        session = await making
    assert EARLY not in agent.stderr()
    assert session.session_id.startswith("sess_")
