"""Streams that survive a restart: the server stops, a new one starts on the same SQLite
file, and a client reconnecting with its old Acp-Connection-Id and Last-Event-ID gets the
turn's state, then exactly the updates it missed (or 409 when that cannot be done)."""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.http.app import create_app
from adapters.http.event_ids import parse_event_id
from adapters.http.revival import Revival
from adapters.protocol.journal import seq_of
from bootstrap.container import release
from bootstrap.http import build_agent, database_ready
from bootstrap.settings import Settings
from tests.http.conftest import FAST, AcpHttp, running
from tests.support.postgres import scratch_database
from tests.support.sse_client import SseEvent
from tests.support.wire_validator import WireValidator

pytestmark = pytest.mark.integration


def settings_for(tmp_path: Path, database_url: str | None = None, **changes: Any) -> Settings:
    return Settings(
        provider="demo",
        demo_pace=0.0,
        config_dir=tmp_path,
        database_url=database_url or f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}",
        **changes,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The database both server processes share: a SQLite file, or a PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    else:
        with scratch_database("restart") as url:
            yield url


@asynccontextmanager
async def server(settings: Settings) -> AsyncIterator[str]:
    """One server process's life: the agent, the app and uvicorn; stopped as
    bootstrap/http.py stops them (connections kept, journal written, engine disposed)."""
    dispatcher, container = build_agent(settings)

    async def revival() -> Revival:
        return container.revival()  # type: ignore[no-any-return]

    try:
        app = create_app(dispatcher, FAST, database_ready(settings.database_url), revival=revival)
        async with running(app) as base:
            yield f"{base}/acp"
    finally:
        await container.registry().close_all()
        await release(container)


def number(event: SseEvent) -> int:
    parsed = parse_event_id(event.id or "")
    assert parsed is not None, event.id
    return parsed.number


def answers(request_id: int) -> Any:
    return lambda e: e.event == "message" and e.json().get("id") == request_id


def plain(events: list[SseEvent]) -> list[dict[str, Any]]:
    """The messages of events already validated once (a second check would see repeats)."""
    return [e.json() for e in events if e.event == "message"]


def updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"] for m in messages if m.get("method") == "session/update"]


async def open_session(client: AcpHttp, cwd: Path) -> tuple[str, list[SseEvent]]:
    async with client.stream() as sse:
        new = await client.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        events = await sse.until(answers(new))
        session_id = plain(events)[-1]["result"]["sessionId"]
        prompt = await client.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "help"}]},
        )
        events += await sse.until(answers(prompt))
    client.received(events)  # validated, once
    return session_id, events


async def test_a_restarted_server_resumes_the_connection_with_exactly_the_missed_updates(
    tmp_path: Path, http: httpx.AsyncClient, database_url: str
) -> None:
    wire = WireValidator()
    settings = settings_for(tmp_path, database_url)
    async with server(settings) as url:
        a = AcpHttp(http, url, wire=wire)
        await a.initialize()
        session_id, seen = await open_session(a, tmp_path)
        last = seen[-1]
        cursor = max(seq_of(p) or 0 for p in updates(plain(seen)))
        assert parse_event_id(last.id or "") == parse_event_id(f"{number(last)}-{cursor}")
        # While a's stream is closed, another client changes the session.
        b = AcpHttp(http, url, wire=WireValidator())
        await b.initialize()
        async with b.stream() as sse:
            load = await b.request(
                "session/load", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []}
            )
            await sse.until(answers(load))
            mode = await b.request(
                "session/set_mode", {"sessionId": session_id, "modeId": "accept_edits"}
            )
            changed = await sse.until(answers(mode))
        missed = [p for p in updates(b.received(changed)) if (seq_of(p) or 0) > cursor]
        newest = max(seq_of(p) or 0 for p in updates(b.received(changed)))
    assert missed and [seq_of(p) for p in missed][-1] == newest

    restarted = replace(settings, replica_id="restarted")  # a new process: a new replica id
    async with server(restarted) as url:  # on the same database
        a.url = url
        async with a.stream(last_event_id=last.id) as sse:
            assert sse.response.status_code == 200
            first, *rest = await sse.take(1 + newest - cursor)
        turn = a.received([first])[0]["params"]
        assert turn["update"] == {"sessionUpdate": "session_info_update"}
        assert turn["_meta"]["iac_code"]["turn"] == {"state": "idle"}
        assert updates(a.received(rest)) == missed
        numbers = [number(e) for e in [first, *rest]]
        assert numbers == list(range(number(last) + 1, number(last) + 2 + newest - cursor))
        assert parse_event_id(rest[-1].id or "") == parse_event_id(f"{numbers[-1]}-{newest}")
        # Resumed, not a stranger: its requests are served on its stream.
        async with a.stream() as sse:
            resume = await a.request(
                "session/resume", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []}
            )
            after = a.received(await sse.until(answers(resume)))
        assert "result" in after[-1]
    wire.assert_clean()


async def test_a_restarted_server_refuses_with_409_what_it_cannot_resume_exactly(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    settings = settings_for(tmp_path, journal_keep_events=4)
    async with server(settings) as url:
        a = AcpHttp(http, url)
        await a.initialize()
        _session_id, seen = await open_session(a, tmp_path)
        numbered = [e for e in seen if e.event == "message" and "-" in (e.id or "")]
        oldest, newest = numbered[0], numbered[-1]
        assert seq_of(plain([oldest])[0]["params"]) == 1
    async with server(replace(settings, replica_id="restarted")) as url:
        headers = {"Acp-Connection-Id": a.id or ""}

        async def get(last_event_id: str | None) -> httpx.Response:
            extra = {} if last_event_id is None else {"Last-Event-ID": last_event_id}
            return await http.get(url, headers=headers | extra)

        expired = await get(oldest.id)
        assert expired.status_code == 409
        assert expired.json()["reason"] == "cursor_expired"
        assert expired.json()["action"] == "session/load"
        parsed = parse_event_id(newest.id or "")
        assert parsed is not None and parsed.cursors is not None
        ahead = await get(f"{parsed.number}-{parsed.cursors[0] + 1}")
        assert ahead.status_code == 409 and ahead.json()["reason"] == "cursor_ahead"
        mismatch = await get(f"{parsed.number}-1.1")
        assert mismatch.status_code == 409 and mismatch.json()["reason"] == "cursor_mismatch"
        no_cursor = await get(None)
        assert no_cursor.status_code == 409
        assert no_cursor.json()["reason"] == "last_event_id_required"
        post = await http.post(
            url, headers=headers, json={"jsonrpc": "2.0", "id": 9, "method": "session/list"}
        )
        assert post.status_code == 409
        unknown = await http.get(url, headers={"Acp-Connection-Id": "nobody", "Last-Event-ID": "1"})
        assert unknown.status_code == 400  # never stored: as before
        malformed = await get("12-x")
        assert malformed.status_code == 400
        # None of these took the connection up: the newest cursor still resumes it.
        a.url = url
        async with a.stream(last_event_id=newest.id) as sse:
            assert sse.response.status_code == 200
            first = await sse.next()
        assert first.json()["params"]["_meta"]["iac_code"]["turn"] == {"state": "idle"}
