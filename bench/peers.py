"""The same streaming turn through iac-code and through a peer ACP agent, side by side.

Run:  .venv/bin/python bench/peers.py [--runs 3] [--deltas 20000]   (or `make bench-peers`)
The peer is Zed's `claude-code-acp` (npm `@zed-industries/claude-code-acp`): found as
$CLAUDE_CODE_ACP, else on PATH; when it is not installed this says so and measures
iac-code alone. Both agents stream one turn of `--deltas` one-character text deltas from
the scripted Messages API on 127.0.0.1 (tests/support/scripted_anthropic.py; the peer
reaches it through ANTHROPIC_BASE_URL, and runs without IS_SANDBOX, which it refuses some
modes under). Per agent: CPU of its whole process tree during the turn (the peer streams in
a child `claude` CLI process), and the turn's wall time, session/prompt to its response.
Side requests the peer makes (token counts, a small model's checks) get a one-word reply;
only the turn's own request gets the long stream.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, StdioAgent, median, print_table
from bench.streaming import pieces
from tests.support.scripted_anthropic import MESSAGES_PATH, ScriptedAnthropic, stream, text

PEER = "claude-code-acp"
PEER_PACKAGE = "@zed-industries/claude-code-acp"
PROMPT = "Stream the benchmark text"  # the request holding this gets the long stream
WARM_PROMPT = "Say ok"


class TurnServer(ScriptedAnthropic):
    """The scripted Messages API, answering whatever an agent asks: the long stream to the
    one streamed request that carries PROMPT while armed, a short reply to anything else."""

    def __init__(self) -> None:
        super().__init__()
        self.turn: Any = None  # the long reply, until a request takes it

    def _take(self, method: str, path: str, headers: dict[str, str], body: Any) -> Any:
        if method == "POST" and path == MESSAGES_PATH:
            with self._lock:
                if self.turn is not None and _is_the_turn(body):
                    self._queue.appendleft(self.turn)
                    self.turn = None
                elif not self._queue:
                    self._queue.append(stream(text("ok")))
        return super()._take(method, path, headers, body)


def _is_the_turn(body: Any) -> bool:
    if not isinstance(body, dict) or body.get("stream") is not True or not body.get("messages"):
        return False
    return PROMPT in json.dumps(body["messages"][-1])


@dataclass(frozen=True, slots=True)
class Turns:
    cpu: list[float]
    wall: list[float]
    complete: bool  # every turn's text arrived whole and in order


def peer_command() -> list[str] | None:
    found = os.environ.get("CLAUDE_CODE_ACP") or shutil.which(PEER)
    return [found] if found else None


def run_turns(
    server: TurnServer, command: list[str] | None, env: dict[str, str], runs: int, deltas: int
) -> Turns:
    expected = "".join(pieces(deltas))
    cpu, wall, complete = [], [], True
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        agent_env = {**env, "HOME": tmp} if command else env  # the peer keeps its state there
        agent = StdioAgent(home, home, agent_env, command=command, unset=("IS_SANDBOX",))
        try:
            agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            session = agent.call("session/new", {"cwd": tmp, "mcpServers": []})["sessionId"]
            prompt(agent, session, WARM_PROMPT)  # loads what a first turn loads: not measured
            for _ in range(runs):
                server.turn = stream(text(*pieces(deltas)))
                used, took, received = timed_turn(agent, session)
                cpu.append(used)
                wall.append(took)
                complete = complete and received == expected
        finally:
            agent.close(patience=5)
    return Turns(cpu, wall, complete)


def prompt(agent: StdioAgent, session: str, words: str) -> None:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": words}]}
    result = agent.call("session/prompt", params, timeout=600)
    assert result.get("stopReason") == "end_turn", result


def timed_turn(agent: StdioAgent, session: str) -> tuple[float, float, str]:
    before = len(agent.notifications)
    cpu = agent.tree_cpu()
    started = time.perf_counter()
    prompt(agent, session, PROMPT)
    took = time.perf_counter() - started
    used = agent.tree_cpu() - cpu
    said = [
        n["params"]["update"]["content"].get("text", "")
        for n in agent.notifications[before:]
        if n.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    ]
    return used, took, "".join(said)


def measure(runs: int = 3, deltas: int = 20_000) -> list[Row]:
    peer = peer_command()
    with TurnServer() as server:
        ours = run_turns(
            server,
            None,
            {
                "IAC_CODE_PROVIDER": "anthropic",
                "IAC_CODE_API_KEY": "bench-key",
                "IAC_CODE_BASE_URL": server.base_url,
                "IAC_CODE_MODEL": "claude-test",
                "IAC_CODE_MAX_RETRIES": "0",
            },
            runs,
            deltas,
        )
        theirs = None
        if peer is not None:
            env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "bench-key"}
            theirs = run_turns(server, peer, env, runs, deltas)
    what = f"{deltas:,} one-character deltas"
    rows = [
        Row(f"peers: iac-code, agent CPU for a turn of {what}", median(ours.cpu), "s"),
        Row("peers: iac-code, that turn's wall time", median(ours.wall), "s", None, _told(ours)),
    ]
    if theirs is None:
        print(
            f"peers: {PEER} is not installed (npm install -g {PEER_PACKAGE}, or set "
            "CLAUDE_CODE_ACP to its path): iac-code measured alone",
            file=sys.stderr,
        )
        return [
            *rows,
            Row(
                f"peers: {PEER}",
                float("nan"),
                "s",
                None,
                f"NOT INSTALLED (npm i -g {PEER_PACKAGE})",
            ),
        ]
    return [
        *rows,
        Row(f"peers: {PEER}, agent CPU (its process tree)", median(theirs.cpu), "s"),
        Row(f"peers: {PEER}, wall time", median(theirs.wall), "s", None, _told(theirs)),
        Row(
            f"peers: {PEER} / iac-code, agent CPU",
            median(theirs.cpu) / median(ours.cpu),
            "x",
            None,
            f"wall time {median(theirs.wall) / median(ours.wall):.2f}x",
        ),
    ]


def _told(turns: Turns) -> str:
    return f"{len(turns.wall)} runs" + ("" if turns.complete else "; TEXT INCOMPLETE")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=20_000)
    args = parser.parse_args()
    print_table(measure(args.runs, args.deltas))


if __name__ == "__main__":
    main()
