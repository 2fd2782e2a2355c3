"""The largest image the default cap allows, sent and replayed over HTTP with the official
client: no body or event limit of the transport refuses it. Three of them (15 MiB) replay
within the default 16 MiB connection buffer however slowly the client reads."""

import base64
from dataclasses import replace
from pathlib import Path

import pytest
from acp.schema import ImageContentBlock

from bootstrap.settings import Settings
from domain.images import DEFAULT_MAX_IMAGE_BYTES
from tests.e2e.conftest import RecordingClient
from tests.http.conftest import FAST
from tests.http.test_agent_over_http import agent_server, anthropic_settings, sdk_client
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text
from tests.support.wire_validator import WireValidator

pytestmark = pytest.mark.integration


def largest_png(n: int) -> str:
    """A PNG whose base64 is exactly the default cap (distinct per `n`)."""
    header = b"\x89PNG\r\n\x1a\n" + n.to_bytes(4, "big")
    raw = header + bytes(DEFAULT_MAX_IMAGE_BYTES // 4 * 3 - len(header))
    data = base64.b64encode(raw).decode()
    assert len(data) == DEFAULT_MAX_IMAGE_BYTES
    return data


@pytest.mark.parametrize("images", [1, 3])
async def test_the_largest_allowed_images_are_sent_and_replayed_over_http(
    tmp_path: Path, images: int
) -> None:
    workdir = tmp_path / "workspace"
    workdir.mkdir()
    datas = [largest_png(n) for n in range(images)]
    wire = WireValidator()
    with ScriptedAnthropic(*(stream(text("Seen.")) for _ in datas)) as model:
        settings: Settings = anthropic_settings(tmp_path, model)
        assert settings.max_image_bytes == DEFAULT_MAX_IMAGE_BYTES
        async with agent_server(settings) as base:
            async with sdk_client(base, wire, RecordingClient()) as (conn, _):
                sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
                for data in datas:
                    result = await conn.prompt(
                        session_id=sid,
                        prompt=[ImageContentBlock(type="image", data=data, mime_type="image/png")],
                    )
                    assert result.stop_reason == "end_turn"
            recorder = RecordingClient()
            async with sdk_client(base, wire, recorder) as (conn, _):
                await conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        sent = [r.messages[-1]["content"][0]["source"]["data"] for r in model.requests]
        model.assert_script_consumed()
    replayed = [
        u.content.data
        for _, u in recorder.updates
        if u.session_update == "user_message_chunk" and u.content.type == "image"
    ]
    assert sent == datas
    assert replayed == datas
    wire.assert_clean()


async def test_a_replay_larger_than_the_connections_buffer_arrives_whole(
    tmp_path: Path,
) -> None:
    """Loading a history twice the buffer's size (here: images) over the real transport
    (the pacing itself is tested in test_outbox.py with a reader that lags on purpose)."""
    workdir = tmp_path / "workspace"
    workdir.mkdir()
    datas = [largest_png(n)[: 2**20] for n in range(6)]  # 1 MiB of base64 each
    config = replace(FAST, buffer_max_bytes=3 * 2**20, max_event_bytes=2 * 2**20)
    wire = WireValidator()
    with ScriptedAnthropic(*(stream(text("Seen.")) for _ in datas)) as model:
        async with agent_server(anthropic_settings(tmp_path, model), config) as base:
            async with sdk_client(base, wire, RecordingClient()) as (conn, _):
                sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
                for data in datas:
                    image = ImageContentBlock(type="image", data=data, mime_type="image/png")
                    await conn.prompt(session_id=sid, prompt=[image])
            recorder = RecordingClient()
            async with sdk_client(base, wire, recorder) as (conn, _):
                await conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
    replayed = [
        u.content.data
        for _, u in recorder.updates
        if u.session_update == "user_message_chunk" and u.content.type == "image"
    ]
    assert replayed == datas
    wire.assert_clean()
