"""Long-session benchmark: a 300-turn session with large tool outputs, through the real
server over stdio (official ACP client) and the real anthropic SDK, against the scripted
Messages API on 127.0.0.1.

Run by hand (not in CI):  .venv/bin/python bench/long_session.py [--turns 300]

Each turn the model reads a ~30 KB file (the tool result goes into the context), then
answers. The scripted server counts every request's size as the real API would roughly
count it (characters / 4) and reports it as the request's input tokens, so the agent's
compaction works from "provider" numbers. The server also simulates the provider's prompt
cache (ScriptedAnthropic(cache=True)): what an earlier request marked with cache_control
and this one repeats is reported as cache-read tokens. Reported: the largest request
against the window (it must stay under it), how many compactions ran, the share of input
tokens read from the cache, and turn latency per block of turns (it should stay flat as
the session grows).
"""

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from acp import spawn_agent_process, text_block
from acp.schema import RequestPermissionResponse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    StreamReply,
    text,
    tool_use,
)

MODEL = "claude-sonnet-4-5"
FILE_CHARS = 30_000


def counted(body: dict[str, Any]) -> int:
    """Roughly the provider's count: about four characters a token."""
    parts = [body.get("system", ""), body.get("messages", []), body.get("tools", [])]
    return len(json.dumps(parts)) // 4


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentLikeReply(StreamReply):
    """Answers as a model would at each step: read a file, then answer; a summary when asked
    for one. Records each request's size (the server's cache simulation then splits it
    into uncached, cache-read and cache-written tokens)."""

    sizes: list[int]

    def events(self, request_body: Any = None, *, number: int = 1) -> list[tuple[str, Any]]:
        body = request_body if isinstance(request_body, dict) else {}
        size = counted(body)
        self.sizes.append(size)
        last = body["messages"][-1]["content"]
        if "tools" not in body:  # a compaction's summary request
            parts: tuple[Any, ...] = (text("Summary: files were read and described. " * 20),)
            reply = replace(self, parts=parts, stop_reason="end_turn")
        elif isinstance(last, list) and last and last[0].get("type") == "tool_result":
            reply = replace(self, parts=(text(f"File described ({number})."),))
        else:
            call = tool_use("read_file", {"path": f"big{number % 5}.txt"}, id=f"toolu_{number}")
            reply = replace(self, parts=(call,), stop_reason="tool_use")
        return StreamReply.events(
            replace(reply, input_tokens=size, output_tokens=40), request_body, number=number
        )


class Client:
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", "") == "agent_message_chunk":
            text_ = update.content.text
            if "Context compacted" in text_:
                self.compactions += 1

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        raise AssertionError("reads inside the project never ask")

    def __init__(self) -> None:
        self.compactions = 0


async def run(turns: int) -> None:
    sizes: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedAnthropic(cache=True) as server:
        project = Path(tmp) / "project"
        project.mkdir()
        for i in range(5):
            (project / f"big{i}.txt").write_text(f"line of code {i}\n" * (FILE_CHARS // 16))
        server.script(*[AgentLikeReply(sizes=sizes) for _ in range(turns * 3)])
        env = {
            "IAC_CODE_CONFIG_DIR": str(Path(tmp) / "config"),
            "IAC_CODE_PROVIDER": "anthropic",
            "IAC_CODE_API_KEY": "sk-bench",
            "IAC_CODE_BASE_URL": server.base_url,
            "IAC_CODE_MODEL": MODEL,
            "IAC_CODE_LOG_LEVEL": "WARNING",
        }
        client = Client()
        iac_code = str(Path(sys.executable).parent / "iac-code")
        async with spawn_agent_process(
            client, iac_code, "acp", env=env, cwd=project, transport_kwargs={"limit": 2**26}
        ) as (conn, _process):
            await conn.initialize(protocol_version=1)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            latencies = []
            for turn in range(turns):
                started = time.perf_counter()
                result = await conn.prompt(
                    session_id=session.session_id,
                    prompt=[text_block(f"Turn {turn}: what is in the next file?")],
                )
                latencies.append((time.perf_counter() - started) * 1000)
                assert result.stop_reason == "end_turn", result
        usages = [r.usage for r in server.requests if r.usage is not None]
        report(turns, sizes, latencies, client.compactions)
        report_cache(usages)


def report(turns: int, sizes: list[int], latencies: list[float], compactions: int) -> None:
    window = 200_000
    print(f"{turns} turns, {len(sizes)} model requests, {compactions} compactions")
    print(
        f"largest request: {max(sizes):,} tokens of {window:,} "
        f"({max(sizes) / window:.0%}); over the window: {sum(s > window for s in sizes)}"
    )
    block = max(1, turns // 6)
    print(f"turn latency by block of {block} turns (ms): median / p90 / max")
    for start in range(0, turns, block):
        part = sorted(latencies[start : start + block])
        p90 = part[min(len(part) - 1, int(len(part) * 0.9))]
        print(
            f"  turns {start:>3}-{start + len(part) - 1:<3}  "
            f"{statistics.median(part):7.1f} {p90:7.1f} {part[-1]:7.1f}"
        )


def report_cache(usages: list[Any]) -> None:
    """Input tokens over the run: read from the cache, written to it, neither."""
    read = sum(u["cache_read_input_tokens"] for u in usages)
    written = sum(u["cache_creation_input_tokens"] for u in usages)
    plain = sum(u["input_tokens"] for u in usages)
    total = read + written + plain
    hits = sum(u["cache_read_input_tokens"] > 0 for u in usages)
    print(f"input tokens: {total:,} over {len(usages)} requests")
    print(f"  read from the cache   {read:>12,} ({read / total:.0%}); {hits} requests read it")
    print(f"  written to the cache  {written:>12,} ({written / total:.0%})")
    print(f"  not cached            {plain:>12,} ({plain / total:.0%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    asyncio.run(run(parser.parse_args().turns))


if __name__ == "__main__":
    main()
