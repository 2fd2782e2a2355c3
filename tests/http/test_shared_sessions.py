"""Several official SDK clients (`acp.http.create_http_stream` + `connect_to_agent`) on one
session of a real server: they follow the same turn, attach mid-stream, answer each other's
permission requests, outlive each other, and cancel. Every message is schema-checked."""

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.http import create_http_stream
from acp.schema import ClientCapabilities, Implementation, RequestPermissionResponse

from adapters.http.app import create_app
from bootstrap.container import release
from bootstrap.http import build_agent, database_ready
from bootstrap.settings import Settings
from tests.e2e.conftest import RecordingClient
from tests.http.conftest import FAST, running
from tests.http.test_agent_over_http import agent_server, anthropic_settings
from tests.support.official_ws import official_on_websocket, ws_url
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text, tool_use
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

pytestmark = pytest.mark.integration

DEADLINE = 20.0
# The updates a client gets for itself on attaching (its replay and announce), not live.
PRIVATE = {"user_message_chunk", "available_commands_update", "usage_update"}


@dataclass
class Follower(RecordingClient):
    """A recording client whose test can wait for what it receives. With `hold`, it never
    answers a permission request (a user who walked away)."""

    hold: bool = False
    wire: WireValidator = field(default_factory=WireValidator)  # its own: ids are per client
    raw: list[dict[str, Any]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        self._changed.set()

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        if self.hold:
            self.permission_requests.append((tool_call, options))
            self._changed.set()
            await asyncio.Event().wait()
        return await super().request_permission(options, session_id, tool_call, **kwargs)

    def saw(self, message: dict[str, Any]) -> None:
        self.raw.append(message)
        self._changed.set()

    async def until(self, condition: Callable[[], bool]) -> None:
        async def wait() -> None:
            while not condition():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), DEADLINE)

    def incoming(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.raw if m.get("method") == method]

    def live(self) -> list[Any]:
        """The live updates, consecutive chunks of one message joined: an HTTP outbox may
        merge chunks its reader has not taken yet (adapters.acp_v1.coalesce), so how a
        reply is cut differs between clients; what it says and its order do not."""
        joined: list[Any] = []
        for _, update in self.updates:
            if update.session_update in PRIVATE:
                continue
            item = update.model_dump()
            last = joined[-1] if joined else None
            if (
                last is not None
                and item["session_update"] in ("agent_message_chunk", "agent_thought_chunk")
                and last["session_update"] == item["session_update"]
                and last["message_id"] == item["message_id"]
            ):
                last["content"]["text"] += item["content"]["text"]
            else:
                joined.append(item)
        return joined


@asynccontextmanager
async def sdk(base: str, client: Follower) -> AsyncIterator[Any]:
    def observe(event: StreamEvent) -> None:
        message = json.loads(json.dumps(event.message))
        incoming = event.direction is StreamDirection.INCOMING
        client.wire.check(AGENT if incoming else CLIENT, message)
        if incoming:
            client.saw(message)

    http = httpx.AsyncClient(timeout=httpx.Timeout(None))
    transport = create_http_stream(f"{base}/acp", client=http)
    conn = connect_to_agent(client, transport, observers=[observe])
    try:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="sdk", version="1"),
        )
        yield conn
    finally:
        await conn.close()
        await transport.close()
        await http.aclose()


@asynccontextmanager
async def both_transports(settings: Settings) -> AsyncIterator[str]:
    """The real agent on HTTP+SSE and WebSocket at once; yields its http:// base."""
    dispatcher, container = build_agent(settings)
    try:
        app = create_app(dispatcher, FAST, database_ready(settings.database_url))
        async with running(app, websocket=FAST) as base:
            yield base
    finally:
        await release(container)


@asynccontextmanager
async def sdk_ws(base: str, client: Follower) -> AsyncIterator[Any]:
    """The official client on a WebSocket (`acp.ws.create_websocket_stream`)."""

    def observe(event: StreamEvent) -> None:
        message = json.loads(json.dumps(event.message))
        incoming = event.direction is StreamDirection.INCOMING
        client.wire.check(AGENT if incoming else CLIENT, message)
        if incoming:
            client.saw(message)

    async with official_on_websocket(ws_url(base), client, name="sdk-ws", observe=observe) as (
        conn,
        _,
    ):
        yield conn


def role(response: Any) -> str:
    return response.field_meta["iac_code"]["role"]


def first_turn_state(client: Follower) -> Any:
    first = client.incoming("session/update")[0]
    return first["params"]["_meta"]["iac_code"]["turn"]


async def test_two_clients_follow_one_turn_the_second_attaching_mid_stream(
    tmp_path: Path, workdir: Path
) -> None:
    release = threading.Event()
    reply = stream(text("one ", "two "), HANG, text("three ", "four "), release=release)
    a, b = Follower(), Follower()
    with ScriptedAnthropic(reply) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as first,
            sdk(base, b) as second,
        ):
            session = await first.new_session(cwd=str(workdir), mcp_servers=[])
            sid = session.session_id
            assert role(session) == "controller"
            prompt = asyncio.ensure_future(first.prompt(session_id=sid, prompt=[text_block("go")]))
            await asyncio.to_thread(model.wait_for_hang)
            loaded = await second.load_session(cwd=str(workdir), session_id=sid)
            assert role(loaded) == "observer"
            release.set()
            assert (await asyncio.wait_for(prompt, DEADLINE)).stop_reason == "end_turn"
            await b.until(lambda: b.agent_text().endswith("four "))
        model.assert_script_consumed()
    assert a.agent_text() == "one two three four "
    assert b.agent_text() == "three four "  # the completed history, then live from its attach
    assert first_turn_state(b) == {"state": "running"}
    assert [u.content.text for _, u in b.updates if u.session_update == "user_message_chunk"] == [
        "go"
    ]
    # Live, b got exactly what a got from b's attach on, in the same order.
    a_live = a.live()
    # a's reply is one joined chunk "one two three four "; b's starts at its attach, and
    # from there on both got the same updates in the same order.
    start = next(i for i, u in enumerate(a_live) if u["session_update"] == "agent_message_chunk")
    b_live = b.live()
    assert a_live[start]["content"]["text"] == "one two three four "
    assert b_live[0]["content"]["text"] == "three four "
    assert b_live[1:] == a_live[start + 1 :]
    a.wire.assert_clean()
    b.wire.assert_clean()


async def test_a_permission_answered_by_the_second_client_is_withdrawn_from_the_first(
    tmp_path: Path, workdir: Path
) -> None:
    write = tool_use("write_file", {"path": "p.txt", "content": "yes"}, id="toolu_p1")
    script = (stream(write, stop_reason="tool_use"), stream(text("Written.")))
    a, b = Follower(hold=True), Follower(answers=["allow_once"])
    with ScriptedAnthropic(*script) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as first,
            sdk(base, b) as second,
        ):
            sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            prompt = asyncio.ensure_future(
                first.prompt(session_id=sid, prompt=[text_block("write")])
            )
            await a.until(lambda: bool(a.permission_requests))
            # b attaches while the request is pending: it gets its own copy, answers it.
            await second.resume_session(cwd=str(workdir), session_id=sid)
            assert (await asyncio.wait_for(prompt, DEADLINE)).stop_reason == "end_turn"
            await a.until(lambda: bool(a.incoming("$/cancel_request")))
            await b.until(lambda: b.agent_text() == "Written.")
        model.assert_script_consumed()
    [a_copy] = a.incoming("session/request_permission")
    [b_copy] = b.incoming("session/request_permission")
    assert a_copy["params"] == b_copy["params"]
    assert [m["params"] for m in a.incoming("$/cancel_request")] == [{"requestId": a_copy["id"]}]
    assert b.incoming("$/cancel_request") == []
    assert first_turn_state(b) == {"state": "awaiting_permission", "toolCallId": "toolu_p1"}
    assert (workdir / "p.txt").read_text() == "yes"
    for client in (a, b):  # everyone sees the outcome
        assert client.tool_updates("toolu_p1")[-1].status == "completed"
    a.wire.assert_clean()
    b.wire.assert_clean()


async def test_the_controller_leaves_and_a_later_client_answers_the_pending_permission(
    tmp_path: Path, workdir: Path
) -> None:
    write = tool_use("write_file", {"path": "q.txt", "content": "later"}, id="toolu_q1")
    script = (stream(write, stop_reason="tool_use"), stream(text("Done later.")))
    a, b = Follower(hold=True), Follower(answers=["allow_once"])
    with ScriptedAnthropic(*script) as model:
        async with agent_server(anthropic_settings(tmp_path, model)) as base:
            async with sdk(base, a) as first:
                sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
                prompt = asyncio.ensure_future(
                    first.prompt(session_id=sid, prompt=[text_block("write")])
                )
                await a.until(lambda: bool(a.permission_requests))
            # a's connection is gone (DELETE): the turn waits for someone to answer.
            prompt.cancel()
            async with sdk(base, b) as second:
                loaded = await second.load_session(cwd=str(workdir), session_id=sid)
                assert role(loaded) == "controller"
                await b.until(lambda: b.agent_text() == "Done later.")
        model.assert_script_consumed()
    assert (workdir / "q.txt").read_text() == "later"
    assert len(b.permission_requests) == 1
    assert first_turn_state(b) == {"state": "awaiting_permission", "toolCallId": "toolu_q1"}
    assert b.tool_updates("toolu_q1")[-1].status == "completed"
    a.wire.assert_clean(allow_unanswered=True)  # a left: its prompt had nowhere to go
    b.wire.assert_clean()


async def test_an_observer_cancels_the_turn_and_its_prompt_meanwhile_is_busy(
    tmp_path: Path, workdir: Path
) -> None:
    reply = stream(text("thinking "), HANG, text("never"))
    a, b = Follower(), Follower()
    with ScriptedAnthropic(reply) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as first,
            sdk(base, b) as second,
        ):
            sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            prompt = asyncio.ensure_future(first.prompt(session_id=sid, prompt=[text_block("go")]))
            await asyncio.to_thread(model.wait_for_hang)
            resumed = await second.resume_session(cwd=str(workdir), session_id=sid)
            assert role(resumed) == "observer"
            with pytest.raises(RequestError) as busy:
                await second.prompt(session_id=sid, prompt=[text_block("me too")])
            await second.cancel(session_id=sid)
            answer = await asyncio.wait_for(prompt, DEADLINE)
            await asyncio.to_thread(model.wait_for_disconnect)  # the model call was cut
    assert busy.value.code == -32602
    assert answer.stop_reason == "cancelled"
    assert "never" not in a.agent_text()
    a.wire.assert_clean()
    b.wire.assert_clean()


async def test_with_nobody_back_in_time_the_detached_turn_is_cancelled(
    tmp_path: Path, workdir: Path
) -> None:
    reply = stream(text("partial "), HANG, text("never"))
    a, b = Follower(), Follower()
    with ScriptedAnthropic(reply) as model:
        settings = replace(anthropic_settings(tmp_path, model), detached_turn_timeout=0.2)
        async with agent_server(settings) as base:
            async with sdk(base, a) as first:
                sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
                prompt = asyncio.ensure_future(
                    first.prompt(session_id=sid, prompt=[text_block("keep me")])
                )
                await asyncio.to_thread(model.wait_for_hang)
            prompt.cancel()
            # Nobody attaches: once IAC_CODE_DETACHED_TURN_TIMEOUT passes the turn is cancelled.
            await asyncio.to_thread(model.wait_for_disconnect)
            async with sdk(base, b) as second:
                await second.load_session(cwd=str(workdir), session_id=sid)
                await b.until(lambda: any(u.session_update == "usage_update" for _, u in b.updates))
    assert first_turn_state(b) == {"state": "idle"}
    assert [u.content.text for _, u in b.updates if u.session_update == "user_message_chunk"] == [
        "keep me"
    ]
    a.wire.assert_clean(allow_unanswered=True)  # a left: its prompt had nowhere to go
    b.wire.assert_clean()


async def test_an_sse_client_and_a_websocket_client_share_a_turn_and_its_permission(
    tmp_path: Path, workdir: Path
) -> None:
    write = tool_use("write_file", {"path": "w.txt", "content": "mixed"}, id="toolu_w9")
    release = threading.Event()
    script = (
        stream(text("first "), HANG, write, stop_reason="tool_use", release=release),
        stream(text("Both saw it.")),
    )
    a, b = Follower(hold=True), Follower(answers=["allow_once"])
    with ScriptedAnthropic(*script) as model:
        async with (
            both_transports(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as over_sse,
            sdk_ws(base, b) as over_ws,
        ):
            sid = (await over_sse.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            prompt = asyncio.ensure_future(
                over_sse.prompt(session_id=sid, prompt=[text_block("write")])
            )
            await asyncio.to_thread(model.wait_for_hang)
            loaded = await over_ws.load_session(cwd=str(workdir), session_id=sid)
            assert role(loaded) == "observer"
            release.set()
            assert (await asyncio.wait_for(prompt, DEADLINE)).stop_reason == "end_turn"
            await a.until(lambda: bool(a.incoming("$/cancel_request")))
            await b.until(lambda: b.agent_text().endswith("Both saw it."))
        model.assert_script_consumed()
    assert (workdir / "w.txt").read_text() == "mixed"
    assert a.agent_text() == "first Both saw it."
    assert b.agent_text() == "Both saw it."  # attached after "first " was streamed
    [a_copy] = a.incoming("session/request_permission")
    assert [m["params"] for m in a.incoming("$/cancel_request")] == [{"requestId": a_copy["id"]}]
    a_live = a.live()
    start = next(i for i, u in enumerate(a_live) if u["session_update"] == "tool_call")
    assert b.live() == a_live[start:]  # the same updates, in the same order, on both
    a.wire.assert_clean()
    b.wire.assert_clean()
