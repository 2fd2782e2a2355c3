"""Issue 25 on the real process: what a client writes in one go is served in that order."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_stdio_raw import RawAgent, raw_agent

pytestmark = pytest.mark.e2e


def _line(method: str, params: dict[str, Any], id: int | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return json.dumps(message).encode() + b"\n"


def _prompt(sid: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}


async def _write(raw: RawAgent, data: bytes) -> None:
    raw.process.stdin.write(data)
    await raw.process.stdin.drain()


async def _answers(raw: RawAgent, *ids: int) -> dict[int, dict[str, Any]]:
    """The answers to `ids`, by id, and the order they came in (under the key -1)."""
    answers: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    while len(answers) < len(ids):
        message = await raw.recv(timeout=60)
        if message.get("id") in ids and "method" not in message:
            answers[message["id"]] = message
            order.append(message["id"])
    return {**answers, -1: {"order": order}}


async def _new(raw: RawAgent, workdir: Path, id: int) -> str:
    reply = await raw.call(id, "session/new", {"cwd": str(workdir), "mcpServers": []})
    return str(reply["result"]["sessionId"])


@pytest.mark.parametrize("pace", ["0", "50"])  # the demo at once, and slowly
async def test_finding_5_a_cancel_written_with_its_prompt_cancels_it(
    tmp_path: Path, workdir: Path, pace: str
) -> None:
    async with raw_agent(tmp_path, workdir, IAC_CODE_DEMO_PACE=pace) as raw:
        await raw.initialize()
        sid = await _new(raw, workdir, 1)
        for id in (10, 20, 30):
            await _write(
                raw,
                _line("session/prompt", _prompt(sid), id)
                + _line("session/cancel", {"sessionId": sid}),
            )
            answer = (await _answers(raw, id))[id]
            assert answer["result"]["stopReason"] == "cancelled", answer
        again = await raw.call(40, "session/prompt", _prompt(sid))  # the session serves on
        assert again["result"]["stopReason"] == "end_turn"


@pytest.mark.parametrize("pace", ["0", "50"])
async def test_finding_5_a_close_written_with_its_prompt_cancels_it_then_closes(
    tmp_path: Path, workdir: Path, pace: str
) -> None:
    async with raw_agent(tmp_path, workdir, IAC_CODE_DEMO_PACE=pace) as raw:
        await raw.initialize()
        for id in (10, 20, 30):
            sid = await _new(raw, workdir, id)
            await _write(
                raw,
                _line("session/prompt", _prompt(sid), id + 1)
                + _line("session/close", {"sessionId": sid}, id + 2),
            )
            answers = await _answers(raw, id + 1, id + 2)
            assert answers[id + 1]["result"]["stopReason"] == "cancelled", answers
            assert answers[id + 2]["result"] == {}, answers
            assert answers[-1]["order"] == [id + 1, id + 2]
            # Closed: a prompt now is refused as not open.
            late = await raw.call(id + 3, "session/prompt", _prompt(sid))
            assert late["error"]["code"] == -32602
