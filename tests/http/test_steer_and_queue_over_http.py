"""Steering and queueing across transports and clients: one client prompts over HTTP+SSE,
another attached over a WebSocket steers the running turn, or queues a prompt behind it;
both see what happens, and every message on both wires is checked against the SDK's
schemas and the newest schema file."""

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities, Implementation
from acp.ws import create_websocket_stream

from adapters.http.app import create_app
from bootstrap.container import release as release_container
from bootstrap.http import build_agent, database_ready
from bootstrap.settings import Settings
from tests.e2e.conftest import RecordingClient
from tests.http.conftest import FAST, running
from tests.http.test_agent_over_http import anthropic_settings, sdk_client
from tests.http.test_websocket_agent import sdk_over_websocket
from tests.support.patience import PATIENCE
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import HANG, ScriptedAnthropic, stream, text
from tests.support.wire_validator import AGENT, CLIENT, WireValidator

pytestmark = pytest.mark.integration


@dataclass
class BothValidators:
    """Each message to the SDK's schemas and to the newest schema file."""

    wire: WireValidator = field(default_factory=WireValidator)
    schema: SchemaFileValidator = field(default_factory=SchemaFileValidator)

    def check(self, sender: str, message: Any) -> None:
        self.wire.check(sender, message)
        self.schema.check(sender, json.loads(json.dumps(message)))

    def assert_clean(self) -> None:
        self.wire.assert_clean()
        self.schema.assert_clean()


def waiting(client: RecordingClient) -> list[int]:
    return [
        u.field_meta["iac_code"]["steering"]["waiting"]
        for _, u in client.updates
        if u.session_update == "session_info_update"
        and "steering" in ((u.field_meta or {}).get("iac_code") or {})
    ]


def user_chunks(client: RecordingClient) -> list[tuple[str | None, str]]:
    return [
        (u.message_id, u.content.text)
        for _, u in client.updates
        if u.session_update == "user_message_chunk"
    ]


async def until(condition: Any) -> None:
    async with asyncio.timeout(PATIENCE):
        while not condition():
            await asyncio.sleep(0.01)


@asynccontextmanager
async def agent_server(settings: Settings) -> AsyncIterator[str]:
    """The real agent, serving HTTP+SSE and WebSocket on one port; yields its base URL."""
    dispatcher, container = build_agent(settings)
    try:
        app = create_app(dispatcher, FAST, database_ready(settings.database_url))
        async with running(app, websocket=FAST) as base:
            yield base
    finally:
        await release_container(container)


async def test_a_websocket_client_steers_a_turn_an_http_client_prompted(
    tmp_path: Path, workdir: Path
) -> None:
    release = threading.Event()
    script = (
        stream(text("Working"), HANG, text(" on it"), release=release),
        stream(text("Noted, both")),
    )
    http_side, ws_side = BothValidators(), BothValidators()
    prompter, steerer = RecordingClient(), RecordingClient()
    with ScriptedAnthropic(*script) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk_client(base, http_side, prompter) as (http, init),  # type: ignore[arg-type]
        ):
            session = await http.new_session(cwd=str(workdir), mcp_servers=[])
            sid = session.session_id
            prompt = asyncio.create_task(
                http.prompt(session_id=sid, prompt=[text_block("write it")])
            )
            await asyncio.to_thread(model.wait_for_hang)
            url = base.replace("http://", "ws://") + "/acp"
            async with sdk_over_websocket(url, ws_side, steerer) as (ws, _):  # type: ignore[arg-type]
                await ws.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
                params = {"sessionId": sid, "prompt": [{"type": "text", "text": "and docs"}]}
                answer = asyncio.create_task(ws.ext_method("session/steering", params))
                await until(lambda: waiting(prompter) == [1])  # the HTTP client sees it wait
                release.set()
                steered = await asyncio.wait_for(answer, PATIENCE)
                done = await asyncio.wait_for(prompt, PATIENCE)
                await until(lambda: waiting(steerer)[-1:] == [0])
        model.assert_script_consumed()

    assert init.agent_capabilities.field_meta["steering"] == {"supported": True}
    assert steered["outcome"] == "injected"
    assert done.stop_reason == "end_turn"
    delivered = (steered["_meta"]["iac_code"]["messageId"], "and docs")
    assert user_chunks(prompter) == [delivered]  # live, on the SSE stream
    assert user_chunks(steerer)[-1] == delivered  # and on the socket (after its replay)
    assert model.requests[1].messages[-1]["content"] == [{"type": "text", "text": "and docs"}]
    http_side.assert_clean()
    ws_side.assert_clean()


@asynccontextmanager
async def queueing_socket(
    url: str, validators: BothValidators, recorder: RecordingClient
) -> AsyncIterator[Any]:
    """The official client on a WebSocket, initialized as a client that queues."""

    def observe(event: StreamEvent) -> None:
        sender = AGENT if event.direction is StreamDirection.INCOMING else CLIENT
        validators.check(sender, json.loads(json.dumps(event.message)))

    transport = await create_websocket_stream(url)
    conn = connect_to_agent(recorder, transport, observers=[observe])
    try:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                field_meta={"iac_code": {"promptQueueing": True}}
            ),
            client_info=Implementation(name="queueing-ws", version="1"),
        )
        yield conn
    finally:
        await conn.close()
        await transport.close()


def queues(client: RecordingClient) -> list[list[tuple[str, str]]]:
    return [
        [(e["preview"], e["queuedBy"]) for e in u.field_meta["iac_code"]["queue"]]
        for _, u in client.updates
        if u.session_update == "session_info_update"
        and "queue" in ((u.field_meta or {}).get("iac_code") or {})
    ]


async def test_a_prompt_queued_over_a_socket_is_shown_everywhere_and_runs_after_its_sender_left(
    tmp_path: Path, workdir: Path
) -> None:
    release = threading.Event()
    script = (
        stream(text("Working"), HANG, text(" on it"), release=release),
        stream(text("Queued one done")),
    )
    http_side, ws_side = BothValidators(), BothValidators()
    prompter, queuer = RecordingClient(), RecordingClient()
    with ScriptedAnthropic(*script) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk_client(base, http_side, prompter) as (http, _),  # type: ignore[arg-type]
        ):
            session = await http.new_session(cwd=str(workdir), mcp_servers=[])
            sid = session.session_id
            prompt = asyncio.create_task(
                http.prompt(session_id=sid, prompt=[text_block("write it")])
            )
            await asyncio.to_thread(model.wait_for_hang)
            url = base.replace("http://", "ws://") + "/acp"
            async with queueing_socket(url, ws_side, queuer) as ws:
                await ws.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
                queued = asyncio.create_task(
                    ws.prompt(session_id=sid, prompt=[text_block("from the socket")])
                )
                await until(lambda: queues(prompter) == [[("from the socket", "queueing-ws")]])
            # The socket is gone, its prompt still waits; a client that does not queue is
            # refused busy, as before.
            with pytest.raises(RequestError) as busy:
                await http.prompt(session_id=sid, prompt=[text_block("me too")])
            release.set()
            done = await asyncio.wait_for(prompt, PATIENCE)
            await until(lambda: "Queued one done" in prompter.agent_text())
            await until(lambda: queues(prompter)[-1:] == [[]])
        model.assert_script_consumed()

    with pytest.raises(ConnectionError):
        queued.result()  # its answer had nowhere to go
    assert busy.value.code == -32602
    assert done.stop_reason == "end_turn"
    assert model.requests[1].messages[-1]["content"] == [
        {"type": "text", "text": "from the socket"}
    ]
    http_side.assert_clean()
    ws_side.wire.assert_clean(allow_unanswered=True)  # the queued prompt's answer never came
    ws_side.schema.assert_clean()
