"""session/load and session/resume with a journal cursor (`_meta.iac_code.after`): exactly
the updates after it, to the loading client only, instead of the history replay."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.journal import seq_of
from bootstrap.container import Container, release
from bootstrap.settings import Settings
from tests.integration.test_agent_connections import GatedLLM, Peer, prompt
from tests.support.wire_validator import AGENT, WireValidator

pytestmark = pytest.mark.integration


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Container, GatedLLM, Path]]:
    settings = Settings(
        provider="demo",
        config_dir=tmp_path,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
    )
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    llm = GatedLLM()
    llm.gate.set()
    container.llm.override(providers.Object(llm))
    yield container, llm, tmp_path
    await release(container)


def updates(peer: Peer) -> list[dict[str, Any]]:
    return [m["params"] for m in peer.sent if m.get("method") == "session/update"]


def without_turn(params: dict[str, Any]) -> dict[str, Any]:
    """The update without the turn state an attaching client's first update carries."""
    ours = {k: v for k, v in params["_meta"]["iac_code"].items() if k != "turn"}
    return {**params, "_meta": {**params["_meta"], "iac_code": ours}}


def opening(sid: str, cwd: Path, after: int | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": sid, "cwd": str(cwd), "mcpServers": []}
    if after is not None:
        params["_meta"] = {"iac_code": {"after": after}}
    return params


async def test_load_and_resume_with_a_cursor_send_exactly_what_was_missed(world) -> None:  # type: ignore[no-untyped-def]
    container, _llm, cwd = world
    wire = WireValidator()
    a = Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    await a.call("session/prompt", prompt(sid, "one"))
    seen = updates(a)
    assert [seq_of(p) for p in seen] == list(range(1, len(seen) + 1))
    for params in seen:
        wire.check(AGENT, {"jsonrpc": "2.0", "method": "session/update", "params": params})
    cursor = seq_of(seen[-1])
    assert cursor is not None
    await a.call("session/prompt", prompt(sid, "two"))  # what a second client misses
    missed = updates(a)[len(seen) :]
    await a.connection.close()

    b = Peer(container.agent())
    loaded = await b.call("session/load", opening(sid, cwd, after=cursor))
    assert "result" in loaded, loaded
    got = updates(b)
    # Exactly the missed ones, in order, before the answer (no history replay); the first
    # carries the turn state, as the first update to an attaching client does. Then the
    # load's announcement to this client alone, which is not numbered (not journaled).
    assert got[0]["_meta"]["iac_code"]["turn"] == {"state": "idle"}
    assert [without_turn(p) for p in got[: len(missed)]] == missed
    assert all(seq_of(p) is None for p in got[len(missed) :])
    answer_at = next(n for n, m in enumerate(b.sent) if m.get("id") is not None)
    assert answer_at >= len(missed)

    c = Peer(container.agent())
    newest = max(seq_of(p) or 0 for p in updates(b))
    resumed = await c.call("session/resume", opening(sid, cwd, after=cursor))
    assert "result" in resumed, resumed
    assert [seq_of(p) for p in updates(c)][: newest - cursor] == list(range(cursor + 1, newest + 1))
    await b.connection.close()
    await c.connection.close()


async def test_a_cursor_too_old_or_ahead_is_refused_with_the_reason(world) -> None:  # type: ignore[no-untyped-def]
    container, _llm, cwd = world
    a = Peer(container.agent())
    sid = (await a.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]
    await a.call("session/prompt", prompt(sid, "one"))
    newest = seq_of(updates(a)[-1])
    assert newest is not None
    await a.connection.close()
    b = Peer(container.agent())
    ahead = await b.call("session/load", opening(sid, cwd, after=newest + 5))
    assert ahead["error"]["code"] == -32602
    assert ahead["error"]["data"]["reason"] == "cursor_ahead"
    assert "session/load" in ahead["error"]["data"]["hint"]
    bad = await b.call("session/resume", opening(sid, cwd) | {"_meta": {"iac_code": {"after": -1}}})
    assert bad["error"]["data"]["reason"] == "invalid_cursor"
    assert updates(b) == []  # nothing was replayed on a refused cursor
    # The connection still serves: a plain load replays the history.
    plain = await b.call("session/load", opening(sid, cwd))
    assert "result" in plain
    assert any(p["update"]["sessionUpdate"] == "user_message_chunk" for p in updates(b))
    await b.connection.close()
