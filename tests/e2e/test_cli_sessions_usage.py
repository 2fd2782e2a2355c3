"""`iac-code sessions show`: tokens and cost per turn and in total, for turns the real process
recorded against the scripted Messages API, priced by a config.toml catalogue table."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import IAC_CODE, Spawn, anthropic_env
from tests.support.scripted_anthropic import (
    Part,
    ScriptedAnthropic,
    StreamReply,
    stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e

# Prices per million tokens of the scripted model, set in config.toml; claude-other has none.
PRICES = {"input": 2.0, "output": 10.0, "cache_read": 0.2, "cache_write": 2.5}
CONFIG = """
[catalogue."claude-test"]
name = "Test model"
input_price = 2
output_price = 10.0
cache_read_price = 0.2
cache_write_price = 2.5
currency = "EUR"
"""
# Per turn: each request's (input, output, cache read, cache write) tokens.
TURNS = [
    [(1200, 80, 0, 3000), (1500, 40, 3000, 0)],  # a tool call, then the answer
    [(400, 25, 3000, 100)],
    [(900, 60, 0, 0)],  # on claude-other: not priced
]


def cost(tokens: tuple[int, int, int, int]) -> float:
    rates = (PRICES["input"], PRICES["output"], PRICES["cache_read"], PRICES["cache_write"])
    return sum(n * rate for n, rate in zip(tokens, rates, strict=True)) / 1_000_000


def summed(requests: list[tuple[int, int, int, int]]) -> tuple[int, ...]:
    return tuple(sum(column) for column in zip(*requests, strict=True))


def reply(tokens: tuple[int, int, int, int], *parts: Part, **options: Any) -> StreamReply:
    inputs, outputs, read, written = tokens
    return stream(
        *parts,
        input_tokens=inputs,
        output_tokens=outputs,
        cache_read_input_tokens=read,
        cache_creation_input_tokens=written,
        **options,
    )


def show(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [IAC_CODE, "sessions", "show", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"], **env},
        check=False,
    )


async def test_show_reports_each_turns_tokens_and_cost_and_the_total(
    spawn: Spawn, workdir: Path, tmp_path: Path, server: ScriptedAnthropic
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    (first_call, first_answer), (second,), (third,) = TURNS
    server.script(
        reply(first_call, tool_use("list_files", {}, id="toolu_ls"), stop_reason="tool_use"),
        reply(first_answer, text("Listed.")),
        reply(second, text("Two.")),
        reply(third, text("Three.")),
    )
    env = anthropic_env(
        server, IAC_CODE_MODELS="claude-test,claude-other", IAC_CODE_CONFIG_DIR=str(home)
    )
    async with spawn(env) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        for words in ("list the files", "and then?"):
            await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
        await agent.conn.set_config_option(config_id="model", session_id=sid, value="claude-other")
        await agent.conn.prompt(session_id=sid, prompt=[text_block("once more")])
    server.assert_script_consumed()

    shown = show(env, sid, "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert (report["id"], report["model"], report["cwd"]) == (sid, "claude-other", str(workdir))
    assert report["currency"] == "EUR"  # claude-other has no prices; the priced models' one
    rows = report["turns"]
    assert [(t["requests"], t["stopReason"]) for t in rows] == [
        (2, "end_turn"),
        (1, "end_turn"),
        (1, "end_turn"),
    ]
    for row, requests in zip(rows, TURNS, strict=True):
        keys = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
        assert tuple(row[k] for k in keys) == summed(requests)
    priced = [sum(cost(r) for r in requests) for requests in TURNS[:2]]
    assert [t["cost"] for t in rows[:2]] == pytest.approx(priced)
    assert rows[2]["cost"] is None
    whole = report["total"]
    assert whole["requests"] == 4
    assert whole["inputTokens"] == 1200 + 1500 + 400 + 900
    assert whole["cacheReadTokens"] == 6000 and whole["cacheWriteTokens"] == 3100
    assert whole["cost"] == pytest.approx(sum(priced))

    lines = show(env, sid).stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("TURN"))
    first, second_row, third_row, total = (line.split() for line in lines[header + 1 : header + 5])
    assert first[0] == "1" and first[3:] == [
        "end_turn",
        "2",
        *map(str, summed(TURNS[0])),
        f"{priced[0]:.6f}",
        "EUR",
    ]
    assert second_row[-2:] == [f"{priced[1]:.6f}", "EUR"]
    assert third_row[0] == "3" and third_row[-1] == "—"
    every = summed([r for requests in TURNS for r in requests])
    assert total == ["TOTAL", "4", *map(str, every), f"{sum(priced):.6f}", "EUR"]
    assert any(line == "> list the files" for line in lines)  # the conversation follows

    missing = show(env, "sess_nope", "--json")
    assert missing.returncode == 1 and missing.stdout == ""
    assert "no session 'sess_nope'" in missing.stderr
