"""Queueing over stdio with the official client: a prompt sent while a turn runs waits its
turn (the client opted in with `clientCapabilities._meta.iac_code.promptQueueing`), runs
in order, and is answered after its own turn; the queue is shown on each change, withdrawn
one at a time with `$/cancel_request`, bounded, and left alone by `session/cancel`."""

import asyncio
import contextlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ClientCapabilities

from tests.e2e.conftest import Agent, Spawn, anthropic_env, until
from tests.support.patience import PATIENCE
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text
from tests.support.wire_validator import AGENT, CLIENT

pytestmark = pytest.mark.e2e

QUEUEING = ClientCapabilities(field_meta={"iac_code": {"promptQueueing": True}})


def queues(agent: Agent) -> list[list[str]]:
    """Each queue shown (`_meta.iac_code.queue`), as its previews."""
    shown = []
    for message in agent.sent_by_agent("session/update"):
        meta = message["params"]["update"].get("_meta") or {}
        queue = (meta.get("iac_code") or {}).get("queue")
        if queue is not None:
            shown.append([entry["preview"] for entry in queue])
    return shown


def prompt_ids(agent: Agent) -> dict[str, Any]:
    """The client's session/prompt request ids, by the prompt's text."""
    return {
        m["params"]["prompt"][0]["text"]: m["id"]
        for s, m in agent.raw
        if s == CLIENT and m.get("method") == "session/prompt"
    }


def timeline(agent: Agent) -> list[str]:
    """What the agent sent, in order: each reply's text (chunks joined) and `answer <text>`
    for the answer to the prompt with that text."""
    asked = {v: k for k, v in prompt_ids(agent).items()}
    said: list[str] = []
    replying = False
    for sender, message in agent.raw:
        if sender != AGENT:
            continue
        update = (message.get("params") or {}).get("update") or {}
        if update.get("sessionUpdate") == "agent_message_chunk":
            piece = update["content"]["text"]
            said[-1:] = [said[-1] + piece] if replying else [*said[-1:], piece]
            replying = True
        elif "id" in message and message["id"] in asked and "method" not in message:
            said.append(f"answer {asked[message['id']]}")
            replying = False
    return said


def assert_schema_clean(agent: Agent) -> None:
    schema = SchemaFileValidator(which="stable")
    for sender, message in agent.raw:
        schema.check(sender, json.loads(json.dumps(message)))
    schema.assert_clean()


async def test_three_prompts_queued_behind_a_turn_run_in_order_each_answered_after_its_turn(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    server.script(
        stream(text("First"), HANG, text(" done"), release=release),
        *(stream(text(f"{word} done")) for word in ("A", "B", "C")),
    )
    async with spawn(anthropic_env(server)) as agent:
        init = await agent.initialize(QUEUEING)
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        prompts = [asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block("F")]))]
        await asyncio.to_thread(server.wait_for_hang)
        for shown, word in enumerate(("A", "B", "C"), 1):
            prompts.append(
                asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block(word)]))
            )
            await until(lambda n=shown: len(queues(agent)) == n, agent)
        release.set()
        answers = [await asyncio.wait_for(p, PATIENCE) for p in prompts]
        assert_schema_clean(agent)

    assert init.agent_capabilities.field_meta["iac_code"]["promptQueueing"] is True
    assert [a.stop_reason for a in answers] == ["end_turn"] * 4
    assert timeline(agent) == [
        "First done",
        "answer F",
        "A done",
        "answer A",
        "B done",
        "answer B",
        "C done",
        "answer C",
    ]
    assert [r.messages[-1]["content"] for r in server.requests[1:]] == [
        [{"type": "text", "text": word}] for word in ("A", "B", "C")
    ]
    assert queues(agent) == [["A"], ["A", "B"], ["A", "B", "C"], ["B", "C"], ["C"], []]
    entry = agent.sent_by_agent("session/update")
    first_shown = next(
        m["params"]["update"]["_meta"]["iac_code"]["queue"][0]
        for m in entry
        if (m["params"]["update"].get("_meta") or {}).get("iac_code", {}).get("queue")
    )
    assert first_shown["queuedBy"] == "e2e" and first_shown["id"].startswith("queued_")


async def test_withdraw_overflow_show_and_a_cancel_that_leaves_the_queue_alone(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    release = threading.Event()
    server.script(stream(text("Long"), HANG, text(" one"), release=release), stream(text("B done")))
    async with spawn(anthropic_env(server, IAC_CODE_PROMPT_QUEUE_MAX="2")) as agent:
        await agent.initialize(QUEUEING)
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id

        def ask(words: str) -> "asyncio.Task[Any]":
            return asyncio.create_task(
                agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
            )

        first = ask("long")
        await asyncio.to_thread(server.wait_for_hang)
        a = ask("A")
        await until(lambda: queues(agent) == [["A"]], agent)
        b = ask("B")
        await until(lambda: queues(agent)[-1:] == [["A", "B"]], agent)
        with pytest.raises(RequestError) as full:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("C")])
        shown = await agent.conn.prompt(session_id=sid, prompt=[text_block("/queue")])
        listing = agent.client.agent_text()
        rpc = agent.conn._conn
        await rpc.send_notification("$/cancel_request", {"requestId": prompt_ids(agent)["A"]})
        withdrawn = await asyncio.wait_for(a, PATIENCE)
        await agent.conn.cancel(session_id=sid)  # the running turn, not the queue
        cancelled = await asyncio.wait_for(first, PATIENCE)
        ran = await asyncio.wait_for(b, PATIENCE)
        assert_schema_clean(agent)

    assert full.value.code == -32602
    assert full.value.data["queueLength"] == 2 and full.value.data["queueMax"] == 2
    assert shown.stop_reason == "end_turn"
    assert "2 queued behind the running turn" in listing
    assert "1. “A” (from e2e" in listing and "2. “B” (from e2e" in listing
    assert withdrawn.stop_reason == "cancelled"
    assert cancelled.stop_reason == "cancelled"
    assert ran.stop_reason == "end_turn"
    assert queues(agent) == [["A"], ["A", "B"], ["B"], []]
    assert [r.messages[-1]["content"] for r in server.requests[1:]] == [
        [{"type": "text", "text": "B"}]  # A never reached the model
    ]
    server.assert_script_consumed()


def journaled_queue(database: Path, session_id: str) -> bool:
    """The journal has written the queue of A and B (it writes in batches)."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT params FROM session_updates WHERE session_id = ? AND params LIKE ?",
            (session_id, '%"preview":"B"%'),
        ).fetchall()
    return bool(rows)


async def test_a_kill_during_a_queued_backlog_runs_nothing_twice(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, tmp_path: Path
) -> None:
    """The queue lives in the process: SIGKILL drops it. After the restart the queued
    prompts have not run (and never will), the client that comes back is told and shown
    the queue empty, and the session takes the next prompt."""
    server.script(stream(text("Long"), HANG, text(" one")), stream(text("Fresh start")))
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize(QUEUEING)
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        waiting = []
        for said in ("long", "A", "B"):
            waiting.append(
                asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=[text_block(said)]))
            )
            if said == "long":
                await asyncio.to_thread(server.wait_for_hang)
            else:
                await until(lambda w=said: any(w in q for q in queues(agent)), agent)
        await until(lambda: queues(agent)[-1:] == [["A", "B"]], agent)
        database = tmp_path / "config" / "iac-code.db"
        await until(lambda: journaled_queue(database, sid), agent)
        agent.kill()
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
    async with spawn(anthropic_env(server)) as again:
        await again.initialize(QUEUEING)
        await again.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        asked = [
            u.content.text
            for _, u in again.client.updates
            if u.session_update == "user_message_chunk"
        ]
        await until(lambda: "queue dropped" in again.client.agent_text(), again)
        told = again.client.agent_text()
        after = await again.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert_schema_clean(again)
    async with spawn(anthropic_env(server)) as third:  # told once, not at every attach
        await third.initialize(QUEUEING)
        await third.conn.resume_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        listed = await third.conn.list_sessions()

    assert asked == ["long"]  # A and B never ran
    assert "dropped 2 queued prompts, which never ran: “A” (from e2e); “B” (from e2e)" in told
    assert queues(again)[-1] == []
    assert "queue dropped" not in third.client.agent_text()
    assert [s.session_id for s in listed.sessions] == [sid]
    assert after.stop_reason == "end_turn"
    assert [r.messages[-1]["content"][-1]["text"] for r in server.requests] == ["long", "again"]
