"""Compaction as protocol updates, through the real process and the official client, for a
client that advertised `clientCapabilities.session.compaction`: automatic past the
threshold and by /compact, each a `compaction_update` (in_progress, then completed) with
the summary streamed between as `compaction_summary_chunk`s, the counts in
`_meta.iac_code` equal to the context meter's `usage_update`; after a kill, a restart and
`session/load`, both replayed where they happened. Every message on the wire is checked
against the newest schema file (the pinned SDK has no models for these updates: they are
read here as raw frames). Without the capability nothing changes:
test_stdio_compaction.py."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent

from tests.e2e.conftest import IAC_CODE, Agent, RecordingClient, anthropic_env
from tests.e2e.test_stdio_commands import say
from tests.e2e.test_stdio_compaction import NOTICE, WINDOW, reply, small_window
from tests.e2e.test_stdio_tools import all_valid
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, http_error, stream, text
from tests.support.wire_validator import AGENT, CLIENT

pytestmark = pytest.mark.e2e

SUMMARY_PIECES = ("SUMMARY: the user counted ", "one, two ", "and three.")
FOCUSED_PIECES = ("FOCUSED: ", "four and five.")
CAPABLE = {"session": {"compaction": {}}}


@asynccontextmanager
async def checked_agent(
    env: dict[str, str], base_env: dict[str, str], workdir: Path, log: Path
) -> AsyncIterator[tuple[Agent, SchemaFileValidator]]:
    """The agent under the official client, each message checked against schema.json."""
    schema = SchemaFileValidator(which="stable")
    raw: list[tuple[str, dict[str, Any]]] = []

    def observe(event: StreamEvent) -> None:
        sender = AGENT if event.direction is StreamDirection.INCOMING else CLIENT
        message = json.loads(json.dumps(event.message))
        raw.append((sender, message))
        schema.check(sender, message)

    client = RecordingClient()
    with log.open("wb") as stderr:
        async with spawn_agent_process(
            client,
            IAC_CODE,
            "acp",
            env={**base_env, **env},
            cwd=workdir,
            transport_kwargs={"stderr": stderr, "limit": 64 * 2**20},
            observers=[observe],
        ) as (conn, process):
            yield Agent(conn, process, client, None, raw, log), schema  # type: ignore[arg-type]
    schema.assert_clean()


async def initialize(agent: Agent, capabilities: dict[str, Any]) -> None:
    """Raw: the SDK's ClientCapabilities has no `session.compaction` yet."""
    await agent.conn._conn.send_request(
        "initialize",
        {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": capabilities,
            "clientInfo": {"name": "e2e", "version": "1"},
        },
    )


def session_updates(agent: Agent, since: int = 0) -> list[dict[str, Any]]:
    """The `update` of each session/update the agent sent after `since` frames."""
    return [
        m["params"]["update"]
        for s, m in agent.raw[since:]
        if s == AGENT and m.get("method") == "session/update"
    ]


def compactions(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"].startswith("compaction_")]


def assert_one_compaction(shown: list[dict[str, Any]], summary: str) -> dict[str, Any]:
    """In progress, the summary chunk by chunk, completed, all under one id: the counts."""
    started, *chunks, completed = shown
    ids = {u["compactionId"] for u in shown}
    assert len(ids) == 1
    assert (started["sessionUpdate"], started["status"]) == ("compaction_update", "in_progress")
    assert {c["sessionUpdate"] for c in chunks} == {"compaction_summary_chunk"}
    assert "".join(c["content"]["text"] for c in chunks) == summary
    assert (completed["sessionUpdate"], completed["status"]) == ("compaction_update", "completed")
    counts: dict[str, Any] = completed["_meta"]["iac_code"]
    assert started["_meta"]["iac_code"] == {
        "tokensBefore": counts["tokensBefore"],
        "size": counts["size"],
    }
    return counts


def at(updates: list[dict[str, Any]], kind: str, **fields: Any) -> int:
    """The index of the first update of `kind` whose fields (or text) match."""
    for index, update in enumerate(updates):
        if update["sessionUpdate"] != kind:
            continue
        shown = update.get("content", {}).get("text")
        if all(update.get(k) == v or (k == "text" and shown == v) for k, v in fields.items()):
            return index
    raise AssertionError(f"no {kind} {fields} in {updates}")


async def test_auto_and_manual_compactions_are_updates_replayed_where_they_happened(
    base_env: dict[str, str],
    workdir: Path,
    server: ScriptedAnthropic,
    tmp_path: Path,
) -> None:
    small_window(tmp_path)
    env = anthropic_env(server, IAC_CODE_MAX_TOKENS="400")
    server.script(
        reply("Reply one.", 1500),
        reply("Reply two.", 2500),
        reply("Reply three.", 3400),  # the reply's context: 3420 of 4000, past 85 %
        stream(text(*SUMMARY_PIECES), input_tokens=900, output_tokens=60),
        reply("Reply four.", 1300),
        reply("Reply five.", 1400),
        stream(text(*FOCUSED_PIECES), input_tokens=700, output_tokens=40),  # /compact
        reply("Reply six.", 600),
    )
    async with checked_agent(env, base_env, workdir, tmp_path / "one.log") as (agent, _):
        await initialize(agent, CAPABLE)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        for words in ("one", "two", "three"):
            await say(agent, sid, words)
        mark = len(agent.raw)
        result = await say(agent, sid, "four")
        auto = session_updates(agent, mark)
        await say(agent, sid, "five")
        mark = len(agent.raw)
        manual_result = await say(agent, sid, "/compact the counting")
        manual = session_updates(agent, mark)
        agent.kill()  # as a crash would: no goodbye
    assert result.stop_reason == "end_turn" and manual_result.stop_reason == "end_turn"

    # Automatic: the compaction, then the meter's usage with the same counts, then the reply;
    # no chat notice beside it (the client shows compactions itself).
    counts = assert_one_compaction(compactions(auto), "".join(SUMMARY_PIECES))
    completed = at(auto, "compaction_update", status="completed")
    usage = auto[completed + 1]
    assert usage["sessionUpdate"] == "usage_update"
    assert (
        (usage["used"], usage["size"])
        == (counts["tokensAfter"], counts["size"])
        == (
            usage["used"],
            WINDOW,
        )
    )
    # What asked for it is the meter's estimate past the threshold; what the next
    # compaction is measured from is what it left.
    assert counts["tokensBefore"] > 0.85 * WINDOW > counts["tokensAfter"]
    assert at(auto, "compaction_update", status="in_progress") < at(
        auto, "agent_message_chunk", text="Reply four."
    )
    assert not [u for u in auto if NOTICE.search(u.get("content", {}).get("text", ""))]

    # By /compact: the same shapes, its own id, its summary, its counts and usage.
    manual_counts = assert_one_compaction(compactions(manual), "".join(FOCUSED_PIECES))
    usage = manual[at(manual, "compaction_update", status="completed") + 1]
    assert (usage["sessionUpdate"], usage["used"]) == ("usage_update", manual_counts["tokensAfter"])
    assert manual_counts["size"] == usage["size"] == WINDOW
    assert compactions(manual)[0]["compactionId"] != compactions(auto)[0]["compactionId"]
    assert not [u for u in manual if NOTICE.search(u.get("content", {}).get("text", ""))]

    async with checked_agent(env, base_env, workdir, tmp_path / "two.log") as (agent, _):
        await initialize(agent, CAPABLE)
        mark = len(agent.raw)
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        replayed = session_updates(agent, mark)
        after = await say(agent, sid, "six")
    assert after.stop_reason == "end_turn"

    # Both, whole, in history order: each where the context was cut.
    first, second = compactions(auto)[0]["compactionId"], compactions(manual)[0]["compactionId"]
    again = compactions(replayed)
    assert [u["compactionId"] for u in again if u["sessionUpdate"] == "compaction_update"] == [
        first,
        first,
        second,
        second,
    ]
    one = [u for u in again if u["compactionId"] == first]
    two = [u for u in again if u["compactionId"] == second]
    assert assert_one_compaction(one, "".join(SUMMARY_PIECES)) == counts
    assert assert_one_compaction(two, "".join(FOCUSED_PIECES)) == manual_counts
    cut = replayed.index(one[0])
    assert at(replayed, "user_message_chunk", text="four") < cut
    assert cut < at(replayed, "agent_message_chunk", text="Reply four.")
    focused = replayed.index(two[0])
    assert at(replayed, "user_message_chunk", text="/compact the counting") < focused
    assert at(replayed, "agent_message_chunk", text="Reply five.") < focused
    assert not [u for u in replayed if NOTICE.search(u.get("content", {}).get("text", ""))]
    all_valid(server)


async def test_a_failed_compaction_is_an_update_with_its_error(
    base_env: dict[str, str],
    workdir: Path,
    server: ScriptedAnthropic,
    tmp_path: Path,
) -> None:
    server.script(
        reply("Parsed.", 100),
        reply("Tested.", 200),
        reply("Shipped.", 300),
        http_error(400, "invalid_request_error", "the summary was refused"),
    )
    async with checked_agent(anthropic_env(server), base_env, workdir, tmp_path / "one.log") as (
        agent,
        _,
    ):
        await initialize(agent, CAPABLE)
        sid = (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        for words in ("parse", "test", "ship"):
            await say(agent, sid, words)
        mark = len(agent.raw)
        result = await say(agent, sid, "/compact")
        shown = session_updates(agent, mark)
    assert result.stop_reason == "end_turn"
    started, failed = compactions(shown)
    assert started["status"] == "in_progress" and failed["status"] == "failed"
    assert failed["compactionId"] == started["compactionId"]
    assert "the summary was refused" in failed["error"]
    # The chat still says what happened and that nothing changed.
    said = "".join(
        u["content"]["text"] for u in shown if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "Compaction failed" in said and "Nothing changed" in said
