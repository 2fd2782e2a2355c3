"""Context compaction through the real process, the official client and the real SDK
against the scripted Messages API: automatic past the threshold (a small window set in
config.toml's catalogue), on request with /compact, and after the provider's overflow."""

import re
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import Spawn, anthropic_env
from tests.e2e.test_stdio_commands import say, start, updates, user_texts
from tests.e2e.test_stdio_tools import all_valid
from tests.support.scripted_anthropic import ScriptedAnthropic, http_error, stream, text

pytestmark = pytest.mark.e2e

NOTICE = re.compile(r"Context compacted: (\d+) → (\d+) tokens")
SUMMARY = "SUMMARY: the user counted one and two; nothing else happened."
WINDOW = 4000
PRICES = {"input": 3.0, "output": 15.0}  # per million tokens


def small_window(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text(
        f'[catalogue."claude-test"]\ncontext_window = {WINDOW}\n'
        f"input_price = {PRICES['input']}\noutput_price = {PRICES['output']}\n"
    )


def reply(words: str, input_tokens: int, output_tokens: int = 20) -> Any:
    return stream(text(words), input_tokens=input_tokens, output_tokens=output_tokens)


def no_compaction_updates(agent: Any) -> bool:
    """A client that did not advertise `session.compaction` is sent none of its updates."""
    kinds = [m["params"]["update"]["sessionUpdate"] for m in agent.sent_by_agent("session/update")]
    return not [k for k in kinds if k.startswith("compaction_")]


def cost(input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * PRICES["input"] + output_tokens * PRICES["output"]) / 1e6


async def test_the_context_is_compacted_past_the_threshold_and_stays_so_after_a_restart(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, tmp_path: Path
) -> None:
    small_window(tmp_path)
    env = anthropic_env(server, IAC_CODE_MAX_TOKENS="400")
    server.script(
        reply("Reply one.", 1500),
        reply("Reply two.", 2500),
        reply("Reply three.", 3400),  # the reply's context: 3420 of 4000, past 85 %
        reply(SUMMARY, 900, 60),  # the summary request
        reply("Reply four.", 1300),
        reply("Reply five.", 1400),
    )
    async with spawn(env) as agent:
        sid = await start(agent, workdir)
        for words in ("one", "two", "three"):
            await say(agent, sid, words)
        result = await say(agent, sid, "four")
        live = agent.client.agent_text()
        shown = updates(agent, "usage_update")
        assert no_compaction_updates(agent)
    summary_request, next_request = server.requests[3], server.requests[4]
    # The summary request: the older turns as a transcript, and no tools to call.
    assert "tools" not in summary_request.body
    [asked] = user_texts(summary_request.messages)
    assert "User:\none" in asked and "Assistant:\nReply two." in asked
    assert "User:\nthree" not in asked  # kept verbatim instead
    # The next request: the summary, then the last two turns as they were.
    carried = user_texts(next_request.messages)
    assert carried[0].startswith("This session was compacted.") and carried[0].endswith(SUMMARY)
    assert carried[1:] == ["three", "Reply three.", "four"]
    before, after = map(int, NOTICE.search(live).groups())  # type: ignore[union-attr]
    assert before > 0.85 * WINDOW > after
    assert live.index("Reply three.") < live.index("Context compacted") < live.index("Reply four.")
    # The client saw the context fill and empty: a usage update per request and one after
    # compaction, each with the whole session's cost so far.
    requests = [(1500, 20), (2500, 20), (3400, 20), (900, 60), (1300, 20)]
    used = [u.used for u in shown]
    assert used[-5:] == [1520, 2520, 3420, after, 1320]
    assert shown[-1].size == WINDOW
    assert shown[-1].cost.amount == pytest.approx(sum(cost(i, o) for i, o in requests))
    assert shown[-1].cost.currency == "USD"
    # The turn's usage covers both of its requests.
    assert (result.usage.input_tokens, result.usage.output_tokens) == (2200, 80)

    async with spawn(env) as agent:
        await agent.initialize()
        await agent.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        replayed = agent.client.agent_text()
        await say(agent, sid, "five")
        assert no_compaction_updates(agent)
    assert NOTICE.search(replayed).groups() == (str(before), str(after))  # type: ignore[union-attr]
    assert SUMMARY not in replayed  # the notice, not the summary, is what the user saw
    assert replayed.index("Reply three.") < replayed.index("Context compacted")
    carried = user_texts(server.requests[5].messages)
    assert carried[0].endswith(SUMMARY)
    assert carried[1:] == ["three", "Reply three.", "four", "Reply four.", "five"]
    all_valid(server)


async def test_compact_on_request_with_a_focus(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        reply("Parsed.", 100),
        reply("Tested.", 200),
        reply("Shipped.", 300),
        reply(SUMMARY, 400, 50),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        for words in ("parse", "test", "ship"):
            await say(agent, sid, words)
        result = await say(agent, sid, "/compact the parser")
        live = agent.client.agent_text()
    assert result.stop_reason == "end_turn"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (400, 50)
    [asked] = user_texts(server.requests[3].messages)
    assert asked.endswith("The user asks the summary to focus on: the parser")
    assert "User:\nparse" in asked and "User:\ntest" not in asked  # the last two turns stay
    assert NOTICE.search(live)


async def test_an_overflow_from_the_provider_compacts_and_retries_once(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    too_long = "prompt is too long: 210000 tokens > 200000 maximum"
    server.script(
        reply("Reply one.", 100),
        reply("Reply two.", 200),
        http_error(400, "invalid_request_error", too_long),
        reply(SUMMARY, 300, 40),
        reply("Reply three.", 150),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, workdir)
        await say(agent, sid, "one")
        await say(agent, sid, "two")
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("three")])
        live = agent.client.agent_text()
    assert result.stop_reason == "end_turn"
    assert "Reply three." in live and NOTICE.search(live)
    assert "model provider error" not in live
    refused = ["one", "Reply one.", "two", "Reply two.", "three"]
    assert user_texts(server.requests[2].messages) == refused
    retried = user_texts(server.requests[4].messages)
    assert retried[0].endswith(SUMMARY)
    assert retried[1:] == ["two", "Reply two.", "three"]
    all_valid(server)
