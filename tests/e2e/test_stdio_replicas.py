"""Two real `iac-code acp` processes on one SQLite file, as two replicas behind one address:
one prompt per session across both, a cancel that reaches the other, and a session that
goes on in one after the other died mid-turn."""

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, RecordingClient, Spawn, anthropic_env, until
from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import (
    HANG,
    ScriptedAnthropic,
    assert_valid_history,
    stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e

BUSY = -32602


def replica(server: ScriptedAnthropic, name: str, **extra: str) -> dict[str, str]:
    # The spawn fixture gives every process the same config dir: one database file.
    return anthropic_env(server, IAC_CODE_REPLICA_ID=name, **extra)


class StuckClient(RecordingClient):
    """An editor that never answers a permission request: the turn waits on its tool."""

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **_: Any):  # type: ignore[no-untyped-def]
        self.permission_requests.append((tool_call, options))
        await asyncio.Event().wait()


async def open_new(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    return (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id


async def test_a_prompt_elsewhere_is_busy_and_a_cancel_elsewhere_stops_it(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("Half of an "), HANG, text("answer")), stream(text("B answers")))
    async with (
        spawn(replica(server, "replica-a")) as a,
        spawn(replica(server, "replica-b", IAC_CODE_LEASE_POLL_SECONDS="0.05")) as b,
    ):
        sid = await open_new(a, workdir)
        running = asyncio.create_task(
            a.conn.prompt(session_id=sid, prompt=[text_block("long one")])
        )
        await asyncio.to_thread(server.wait_for_hang)
        await b.initialize()
        await b.conn.resume_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        with pytest.raises(RequestError) as busy:
            await b.conn.prompt(session_id=sid, prompt=[text_block("me too")])
        assert busy.value.code == BUSY
        await b.conn.cancel(session_id=sid)  # the turn runs in A: B asks through its lease
        result = await asyncio.wait_for(running, PATIENCE)
        assert result.stop_reason == "cancelled"
        await asyncio.to_thread(server.wait_for_disconnect)  # A really dropped the stream
        # B, which resumed the session before A's turn stored anything, takes the next turn
        # from what A stored: the stored version moved, so B reads it again first.
        after = await b.conn.prompt(session_id=sid, prompt=[text_block("again")])
    assert after.stop_reason == "end_turn"
    sent = server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [{"type": "text", "text": "Half of an "}]
    for request in server.requests:
        assert_valid_history(request.body["messages"])
    server.assert_script_consumed()


async def prompt_when_free(agent: Agent, sid: str, words: str, bound: float = 60) -> Any:
    """Prompt once the dead replica's lease has lapsed: until then the answer is busy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while True:
        try:
            return await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
        except RequestError as exc:
            refused = exc
        assert refused.code == BUSY, refused
        assert loop.time() < deadline, f"still busy; stderr:\n{agent.stderr()}"
        await asyncio.sleep(0.1)


def cut_turn_script(server: ScriptedAnthropic) -> None:
    server.script(
        stream(text("First answer, kept.")),
        stream(
            tool_use("write_file", {"path": "a.txt", "content": "x"}, id="toolu_w1"),
            stop_reason="tool_use",
        ),
        stream(text("Carrying on in B.")),
    )


async def die_mid_turn(spawn: Spawn, workdir: Path, env: dict[str, str]) -> str:
    """A completed turn, then a turn whose tool waits for a permission when the process is
    SIGKILLed: the tool use is stored, its result never will be. Returns the session."""
    async with spawn(env, StuckClient()) as a:
        sid = await open_new(a, workdir)
        first = await a.conn.prompt(session_id=sid, prompt=[text_block("first")])
        assert first.stop_reason == "end_turn"
        cut = asyncio.create_task(a.conn.prompt(session_id=sid, prompt=[text_block("write")]))
        await until(lambda: bool(a.client.permission_requests), a)
        a.kill()
        await asyncio.wait_for(a.process.wait(), PATIENCE)
        cut.cancel()  # unanswered: its server is gone
        await asyncio.gather(cut, return_exceptions=True)
    return sid


async def load_cut_session(b: Agent, workdir: Path, sid: str) -> None:
    await b.initialize()
    await b.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
    # The replay: the completed turn whole, the cut one's tool call shown as failed.
    assert "First answer, kept." in b.client.agent_text()
    (_, *updates) = b.client.tool_updates("toolu_w1")
    assert updates[-1].status == "failed"


def assert_went_on(server: ScriptedAnthropic, workdir: Path, database: Path, sid: str) -> None:
    sent = server.requests[2].body["messages"]
    assert_valid_history(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"] == [{"type": "text", "text": "First answer, kept."}]
    results = [b for b in sent[4]["content"] if b["type"] == "tool_result"]
    assert results[0]["tool_use_id"] == "toolu_w1" and results[0]["is_error"]
    assert not (workdir / "a.txt").exists()  # the write was never allowed
    # The repair is stored (the results after the cut tool use), then B's turn.
    with closing(sqlite3.connect(database)) as db:
        rows = db.execute(
            "SELECT role, content FROM messages WHERE session_id = ? ORDER BY position", (sid,)
        ).fetchall()
    roles = [role for role, _ in rows]
    assert roles == ["user", "assistant", "user", "assistant", "user", "user", "assistant"]
    assert json.loads(rows[4][1])[0]["tool_use_id"] == "toolu_w1"
    server.assert_script_consumed()


TAKEN_OVER = "which exited"  # B's log when it takes the lease of a process that exited


async def test_after_a_replica_died_mid_turn_its_lease_lapses_and_another_goes_on(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, tmp_path: Path
) -> None:
    """A and B as on two machines: one database, each its own config directory, so B cannot
    tell that A exited and waits for A's lease to lapse. 5 s, not less: on a loaded machine
    A's renewal (every third of it) came late enough for A to lose its own first turn."""
    cut_turn_script(server)
    database = tmp_path / "shared.db"

    def machine(name: str) -> dict[str, str]:
        return replica(
            server,
            name,
            IAC_CODE_CONFIG_DIR=str(tmp_path / name),
            IAC_CODE_DATABASE_URL=f"sqlite+aiosqlite:///{database}",
            IAC_CODE_LEASE_SECONDS="5",
        )

    sid = await die_mid_turn(spawn, workdir, machine("replica-a"))
    async with spawn(machine("replica-b")) as b:
        await load_cut_session(b, workdir, sid)
        result = await prompt_when_free(b, sid, "carry on")
        assert TAKEN_OVER not in b.stderr()
    assert result.stop_reason == "end_turn"
    assert_went_on(server, workdir, database, sid)


async def test_on_one_machine_a_replica_takes_over_at_once_from_one_that_exited(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, tmp_path: Path
) -> None:
    """A restarted agent (or another on the same machine) need not wait for the lease of
    the one that died: its lock file says it exited. The lease here is 10 minutes."""
    cut_turn_script(server)
    long = {"IAC_CODE_LEASE_SECONDS": "600"}
    sid = await die_mid_turn(spawn, workdir, replica(server, "replica-a", **long))
    async with spawn(replica(server, "replica-b", **long)) as b:
        await load_cut_session(b, workdir, sid)
        result = await b.conn.prompt(session_id=sid, prompt=[text_block("carry on")])
        assert TAKEN_OVER in b.stderr()
    assert result.stop_reason == "end_turn"
    assert_went_on(server, workdir, tmp_path / "config" / "iac-code.db", sid)


async def test_a_turn_cut_while_the_model_streamed_goes_on_elsewhere(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    """Killed before any answer was stored: the prompt stays, the next one follows it, and
    the model gets one user turn holding both."""
    server.script(stream(text("never stored"), HANG), stream(text("Both answered.")))
    async with spawn(replica(server, "replica-a")) as a:
        sid = await open_new(a, workdir)
        cut = asyncio.create_task(a.conn.prompt(session_id=sid, prompt=[text_block("lost?")]))
        await asyncio.to_thread(server.wait_for_hang)
        a.kill()
        await asyncio.wait_for(a.process.wait(), PATIENCE)
        cut.cancel()
        await asyncio.gather(cut, return_exceptions=True)
    async with spawn(replica(server, "replica-b")) as b:
        await b.initialize()
        await b.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        result = await b.conn.prompt(session_id=sid, prompt=[text_block("again")])
    assert result.stop_reason == "end_turn"
    sent = server.requests[1].body["messages"]
    assert_valid_history(sent)
    assert [m["role"] for m in sent] == ["user"]
    said = json.dumps(sent[0]["content"])
    assert "lost?" in said and "again" in said and "never stored" not in said
    server.assert_script_consumed()
