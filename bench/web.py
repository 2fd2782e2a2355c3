"""The web client in a real browser: how soon it lists sessions, and what streaming costs the
page's main thread.

One real server (`iac-code acp --transport http`, the demo model, a new SQLite file, a
token), the page it serves opened in headless Chromium (Debian's /usr/bin/chromium, driven
by Playwright; nothing is downloaded) with the sign-in link the server prints.

- **Page load to first session listed**: `--sessions` sessions are made first with the
  official ACP client. A script the page runs before its own (Playwright's init script)
  watches the document and notes `performance.now()` (milliseconds since the navigation
  started) when the first `<li>` appears in the `Sessions` list. A fresh tab each run (no
  cache, no stored token: the link's fragment signs in), then a reload of that tab (cached
  assets, the token in session storage).
- **Main-thread time per 1,000 streamed updates**: the page opens one session and the
  official client, attached to it too, sends `--turns` prompts to the demo model. The page's
  main-thread time over those turns is read with the Chrome DevTools Protocol
  (`Performance.getMetrics`: TaskDuration, which holds ScriptDuration, LayoutDuration and
  RecalcStyleDuration, all shown), from before the first prompt until the page has read
  every update and drawn two more frames; divided by the `session/update` messages the
  page received on its WebSocket (counted from the frames, outside the page). TaskDuration
  is wall time spent in tasks, which a busy machine stretches; the CPU time of the
  renderer's main thread (user + system, from /proc) over the same window is shown too.

Run alone:  .venv/bin/python bench/web.py [--runs 3] [--sessions 20] [--turns 10]
Prints "skipped: ..." and measures nothing when the web client is not built
(adapters/http/web_client/dist/), or Playwright or /usr/bin/chromium is missing.
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import ROOT, Row, print_table
from bench.web_server import PATIENCE, Server, official_client, start_server, stop

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

DIST = ROOT / "adapters" / "http" / "web_client" / "dist"
BROWSER = Path("/usr/bin/chromium")
PROMPT = "hello"  # the demo model's short answer (~90 words), streamed word by word
STREAM_DIR = "bench-stream"  # the session the page opens, told apart by its directory

FIRST_SESSION = 'ul[aria-label="Sessions"] > li'
# Runs in the page before its own scripts: the moment the first session is listed.
FIRST_SESSION_WATCH = """
window.__firstSessionAt = null;
new MutationObserver((_, observer) => {
  if (document.querySelector('ul[aria-label="Sessions"] > li')) {
    window.__firstSessionAt = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def unavailable() -> str | None:
    """Why the benchmark cannot run here, or None."""
    if not (DIST / "index.html").is_file():
        return "no web client built (adapters/http/web_client/dist/ is absent: run `make web`)"
    if not os.access(BROWSER, os.X_OK):
        return f"no browser at {BROWSER} (scripts/ensure-chromium installs it)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "Playwright is not installed (the test extra: pip install -e '.[test]')"
    return None


async def first_session_listed(browser: Any, server: Server, runs: int) -> tuple[float, float]:
    """Median ms from navigation to the first listed session: a fresh tab, then a reload."""
    fresh, reloaded = [], []
    for _ in range(runs):
        context = await browser.new_context()
        await context.add_init_script(FIRST_SESSION_WATCH)
        page = await context.new_page()
        for marks in (fresh, reloaded):
            if marks is fresh:
                await page.goto(server.link)
            else:
                await page.reload()
            # A locator's wait, not wait_for_function: the page's CSP forbids eval.
            await page.locator(FIRST_SESSION).first.wait_for(timeout=60_000)
            marks.append(float(await page.evaluate("() => window.__firstSessionAt")))
        await context.close()
    return statistics.median(fresh), statistics.median(reloaded)


@dataclass
class Frames:
    """`session/update` messages the page received on its WebSockets."""

    updates: int = 0

    def watch(self, socket: Any) -> None:
        def received(payload: str | bytes) -> None:
            text = payload if isinstance(payload, str) else payload.decode(errors="replace")
            self.updates += text.count('"session/update"')

        socket.on("framereceived", received)


async def settled(frames: Frames, page: Any) -> None:
    """Until the page has received no update for a while, then drawn two frames."""
    last, quiet_since = -1, time.monotonic()
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() - quiet_since < 1.0:
        if frames.updates != last:
            last, quiet_since = frames.updates, time.monotonic()
        if time.monotonic() > deadline:
            raise RuntimeError("the page kept receiving updates")
        await asyncio.sleep(0.05)
    await page.evaluate(TWO_FRAMES)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def renderers() -> list[int]:
    """Chromium's renderer processes started under this one (Playwright's driver, the
    browser, its zygote...)."""
    ours = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"--type=renderer" not in (entry / "cmdline").read_bytes():
                continue
            pid = int(entry.name)
            ancestor = pid
            while ancestor > 1 and ancestor != ours:
                ancestor = _parent(ancestor)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue  # gone meanwhile
        if ancestor == ours:
            found.append(pid)
    return found


def main_thread_cpu() -> dict[int, float]:
    """User + system CPU seconds of each renderer's main thread (the thread whose id is the
    process's): the thread the page's scripts, style and layout run on."""
    seconds = {}
    for pid in renderers():
        try:
            fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return seconds


def durations(metrics: dict[str, Any]) -> dict[str, float]:
    return {m["name"]: float(m["value"]) for m in metrics["metrics"] if "Duration" in m["name"]}


@dataclass(frozen=True, slots=True)
class StreamCost:
    updates: int
    task_ms: float
    script_ms: float
    layout_ms: float
    style_ms: float
    other_ms: float  # tasks Chromium does not class as script, style or layout
    cpu_ms: float  # the renderers' main threads, from /proc: less swayed by a busy machine

    def per_thousand(self, ms: float) -> float:
        return ms * 1000 / self.updates


async def streaming_cost(
    browser: Any, server: Server, conn: Any, cwd: Path, turns: int, trace: Path | None = None
) -> StreamCost:
    """The page's main-thread time while the official client's `turns` prompts stream."""
    from acp import text_block

    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    context = await browser.new_context()
    page = await context.new_page()
    frames = Frames()
    page.on("websocket", frames.watch)
    await page.goto(server.link)
    sessions = page.get_by_role("list", name="Sessions")
    await sessions.get_by_role("listitem").filter(has_text=STREAM_DIR).first.click()
    await page.get_by_role("region", name="Conversation").wait_for(timeout=60_000)
    await settled(frames, page)  # the replay and announcements on opening: not counted
    cdp = await context.new_cdp_session(page)
    await cdp.send("Performance.enable")
    before, counted = durations(await cdp.send("Performance.getMetrics")), frames.updates
    cpu_before = main_thread_cpu()
    if trace is not None:  # a Chrome trace of the window, for chrome://tracing or Perfetto
        await browser.start_tracing(page=page, path=str(trace))
    for _ in range(turns):
        prompt = [text_block(PROMPT)]
        answer = await conn.prompt(session_id=session.session_id, prompt=prompt)
        assert answer.stop_reason == "end_turn", answer
    await settled(frames, page)
    after = durations(await cdp.send("Performance.getMetrics"))
    cpu_after = main_thread_cpu()
    if trace is not None:
        await browser.stop_tracing()
    await context.close()
    cpu_ms = sum(cpu_after[pid] - cpu_before.get(pid, 0.0) for pid in cpu_after) * 1000
    delta = {name: (after[name] - before.get(name, 0.0)) * 1000 for name in after}
    updates = frames.updates - counted
    if updates == 0:
        raise RuntimeError("the page received no update of the turns it had open")
    return StreamCost(
        updates,
        delta["TaskDuration"],
        delta["ScriptDuration"],
        delta["LayoutDuration"],
        delta["RecalcStyleDuration"],
        delta["TaskOtherDuration"],
        cpu_ms,
    )


async def run(
    runs: int, sessions: int, turns: int, pace: float, trace: Path | None = None
) -> list[Row]:
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory(prefix="iac-bench-web-") as tmp:
        root = Path(tmp)
        server = start_server(root, pace)
        try:
            async with official_client(server) as conn, async_playwright() as playwright:
                for index in range(sessions):
                    listed = root / f"listed-{index:03d}"
                    listed.mkdir()
                    await conn.new_session(cwd=str(listed), mcp_servers=[])
                browser = await playwright.chromium.launch(
                    executable_path=str(BROWSER), headless=True
                )
                try:
                    fresh, reloaded = await first_session_listed(browser, server, runs)
                    stream_cwd = root / STREAM_DIR
                    stream_cwd.mkdir()
                    costs = [
                        await streaming_cost(browser, server, conn, stream_cwd, turns, trace)
                        for _ in range(runs)
                    ]
                finally:
                    await browser.close()
        finally:
            stop(server)
    return rows(fresh, reloaded, costs, sessions, pace)


def rows(
    fresh: float, reloaded: float, costs: list[StreamCost], sessions: int, pace: float
) -> list[Row]:
    def median_of(ms: str) -> float:
        return statistics.median(c.per_thousand(getattr(c, ms)) for c in costs)

    updates = statistics.median(c.updates for c in costs)
    return [
        Row(
            "web: page load to first session listed",
            fresh,
            "ms",
            detail=f"fresh tab, {sessions} sessions",
        ),
        Row("web: reload to first session listed", reloaded, "ms", detail="cached, token kept"),
        Row(
            "web: main thread per 1,000 updates",
            median_of("task_ms"),
            "ms",
            detail=f"script {median_of('script_ms'):.0f}, layout {median_of('layout_ms'):.0f}, "
            f"style {median_of('style_ms'):.0f}, other {median_of('other_ms'):.0f} ms; "
            f"{updates:.0f} updates a run, demo pace {pace:g}/s",
        ),
        Row(
            "web: renderer main-thread CPU per 1,000 updates",
            median_of("cpu_ms"),
            "ms",
            detail="user + system, /proc",
        ),
    ]


def measure(
    runs: int = 3,
    sessions: int = 20,
    turns: int = 10,
    pace: float = 200.0,
    trace: Path | None = None,
) -> list[Row]:
    why = unavailable()
    if why is not None:
        print(f"web: skipped: {why}", file=sys.stderr, flush=True)
        return []
    return asyncio.run(run(runs, sessions, turns, pace, trace))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=20, help="sessions listed")
    parser.add_argument("--turns", type=int, default=10, help="prompts streamed a run")
    parser.add_argument("--pace", type=float, default=200.0, help="demo tokens/s, 0: at once")
    parser.add_argument(
        "--trace", type=Path, help="write a Chrome trace of the streaming window (last run)"
    )
    args = parser.parse_args()
    found = measure(args.runs, args.sessions, args.turns, args.pace, args.trace)
    if found:
        print_table(found)


if __name__ == "__main__":
    main()
