"""Loading a long session: `session/load` of a 200-turn session with a tool call per turn
(user prompt, assistant text + tool_use, tool result, assistant answer, and the recorded
tool call), over stdio, request sent to response arrived (the replay comes before it).

Run alone:  .venv/bin/python bench/replay.py [--turns 200] [--runs 3]
"First" is the first session call of a fresh process (spawn, `initialize`, then the load):
it reads and repairs the session from the database. "Warm" is the same load again on that
process after `session/close`. A third row, without a target, splits the first figure: the
same first load sent once the agent has finished starting (a call only the started agent
answers goes first: `session/list` no longer waits for it), so what is start-up and what
is the load's own first-call cost show apart. A fourth row is the first load again with the
Anthropic provider configured (a key and an unreachable base URL in config.toml; nothing is
asked of the model): the agent then warms the provider's SDK after start, which must not
land in the load. Each run checks the replay's updates, so a faster load that shows less is
caught here.
"""

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, StdioAgent, median, print_table
from bench.stored import demo_session, history, store

SESSION_ID = "sess_replay"


def seed(home: Path, cwd: str, turns: int) -> None:
    messages, records = history(turns)
    session = demo_session(SESSION_ID, cwd, "Replay", messages)
    store(f"sqlite+aiosqlite:///{home / 'iac-code.db'}", [(session, records)])


def timed_load(agent: StdioAgent, cwd: str, turns: int) -> float:
    """Milliseconds from sending the load to its response; checks what was replayed."""
    before = len(agent.notifications)
    seconds, _ = agent.timed_call(
        "session/load", {"sessionId": SESSION_ID, "cwd": cwd, "mcpServers": []}
    )
    _check_replay(agent.notifications[before:], turns)
    return seconds * 1000


def _check_replay(notifications: list[dict[str, Any]], turns: int) -> None:
    # A previous load's announcements (commands, usage) may arrive late: not the replay.
    late = {"available_commands_update", "usage_update"}
    kinds = [n["params"]["update"]["sessionUpdate"] for n in notifications]
    kinds = [k for k in kinds if k not in late]
    # Per turn: the prompt, the text before the call, the call and its result, the answer.
    per_turn = ["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]
    expected = [*per_turn, "agent_message_chunk"] * turns
    assert kinds[: len(expected)] == expected, "the replay changed shape"


ANTHROPIC_CONFIG = """provider = "anthropic"

[providers.anthropic]
api_key = "bench-key"
base_url = "http://127.0.0.1:9"
"""


def first_load_with_sdk(tmp: Path, turns: int) -> float:
    """The first load after start, the Anthropic SDK configured (warmed in the background)."""
    home, cwd = tmp / "home-sdk", tmp / "work"
    if not home.exists():
        home.mkdir()
        (home / "config.toml").write_text(ANTHROPIC_CONFIG)
        (home / "iac-code.db").write_bytes((tmp / "home" / "iac-code.db").read_bytes())
    with StdioAgent(home, cwd, {"IAC_CODE_PROVIDER": "anthropic"}) as agent:
        agent.call("initialize", {"protocolVersion": 1})
        return timed_load(agent, str(cwd), turns)


def measure(runs: int = 3, turns: int = 200, warm_runs: int = 5) -> list[Row]:
    first, warm, ready, sdk = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp, "home"), Path(tmp, "work")
        home.mkdir()
        cwd.mkdir()
        seed(home, str(cwd), turns)
        for _ in range(runs):
            with StdioAgent(home, cwd) as agent:
                agent.call("initialize", {"protocolVersion": 1})
                first.append(timed_load(agent, str(cwd), turns))
                for _ in range(warm_runs):
                    agent.call("session/close", {"sessionId": SESSION_ID})
                    warm.append(timed_load(agent, str(cwd), turns))
            with StdioAgent(home, cwd) as agent:
                agent.call("initialize", {"protocolVersion": 1})
                wait_until_started(agent)
                ready.append(timed_load(agent, str(cwd), turns))
            sdk.append(first_load_with_sdk(Path(tmp), turns))
    what = f"session/load, {turns} turns with a tool call each"
    return [
        Row(f"{what}, first call after start", median(first), "ms", 150, f"worst {max(first):.0f}"),
        Row(f"{what}, warm (after close)", median(warm), "ms", 30, f"worst {max(warm):.0f}"),
        Row(
            f"{what}, first, once started",
            median(ready),
            "ms",
            None,
            f"first call less this: waiting for start-up ({median(first) - median(ready):.0f} ms)",
        ),
        Row(
            f"{what}, first call after start, Anthropic SDK configured",
            median(sdk),
            "ms",
            150,
            f"worst {max(sdk):.0f}",
        ),
    ]


def wait_until_started(agent: StdioAgent) -> None:
    """A call that waits for the agent (closing a session nobody opened; an error is fine)."""
    with contextlib.suppress(RuntimeError):
        agent.call("session/close", {"sessionId": "sess_nobody_opened"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print_table(measure(args.runs, args.turns))


if __name__ == "__main__":
    main()
