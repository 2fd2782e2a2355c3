"""Images through the real process, the official client and the scripted Messages API:
to the model as images, stored and replayed as images, refused whole when they would be
refused by the provider."""

import base64
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ImageContentBlock, ResourceContentBlock

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.e2e.test_stdio_history import updates_before_answer
from tests.support.scripted_anthropic import ScriptedAnthropic, assert_valid_history, stream, text

pytestmark = pytest.mark.e2e

# A real 1x1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
    "rkJggg=="
)


def png(data: str = PNG, mime: str = "image/png") -> ImageContentBlock:
    return ImageContentBlock(type="image", data=data, mime_type=mime)


def api_image(mime: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


async def open_session(agent: Agent, workdir: Path) -> str:
    await agent.initialize()
    return (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id


async def load(agent: Agent, workdir: Path, sid: str) -> list[dict[str, Any]]:
    await agent.initialize()
    await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
    updates = updates_before_answer(agent, "session/load")
    # The load's announce ends what comes before its answer; the rest is the replay.
    announce = [u["sessionUpdate"] for u in updates[-2:]]
    assert announce == ["available_commands_update", "usage_update"]
    return updates[:-2]


async def test_an_image_reaches_the_model_and_is_replayed_as_an_image_after_a_restart(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("A single pixel.")), stream(text("Still a pixel.")))
    async with spawn(anthropic_env(server)) as first:
        sid = await open_session(first, workdir)
        result = await first.conn.prompt(
            session_id=sid, prompt=[text_block("What is this?"), png()]
        )
        assert result.stop_reason == "end_turn"
        first.kill()
    assert server.requests[0].messages[0]["content"] == [
        {"type": "text", "text": "What is this?"},
        api_image("image/png", PNG),
    ]

    async with spawn(anthropic_env(server)) as second:
        replay = await load(second, workdir, sid)
        assert [(u["sessionUpdate"], u["content"]["type"]) for u in replay] == [
            ("user_message_chunk", "text"),
            ("user_message_chunk", "image"),
            ("agent_message_chunk", "text"),
        ]
        assert replay[1]["content"] == {"type": "image", "data": PNG, "mimeType": "image/png"}
        await second.conn.prompt(session_id=sid, prompt=[text_block("And now?")])
    # The stored image goes to the model again with the rest of the history.
    history = server.requests[1].messages
    assert history[0]["content"][1] == api_image("image/png", PNG)
    for request in server.requests:
        assert_valid_history(request.messages)
    server.assert_script_consumed()


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        # 1,024 base64 bytes is the cap below; this one is 1,028.
        (png(base64.b64encode(base64.b64decode(PNG) + bytes(700)).decode()), "too_large"),
        (png(mime="image/jpeg"), "type_mismatch"),  # a PNG labelled JPEG
    ],
    ids=["oversized", "png-labelled-jpeg"],
)
async def test_a_refused_image_names_the_block_stores_nothing_and_the_session_goes_on(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, block: ImageContentBlock, reason: str
) -> None:
    server.script(stream(text("Hello.")))
    env = anthropic_env(server, IAC_CODE_MAX_IMAGE_BYTES="1024")
    async with spawn(env) as first:
        sid = await open_session(first, workdir)
        with pytest.raises(RequestError) as caught:
            await first.conn.prompt(session_id=sid, prompt=[text_block("look"), block])
        result = await first.conn.prompt(session_id=sid, prompt=[text_block("Hi")])
        assert result.stop_reason == "end_turn"
    error = caught.value
    assert error.code == -32602
    assert error.data["field"] == "prompt[1]"
    assert (error.data["index"], error.data["mimeType"], error.data["reason"]) == (
        1,
        block.mime_type,
        reason,
    )
    assert error.data["maxBytes"] == 1024
    assert len(server.requests) == 1  # the refused prompt never reached the model
    assert server.requests[0].messages == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
    ]

    async with spawn(env) as second:
        replay = await load(second, workdir, sid)
    assert [(u["sessionUpdate"], u["content"].get("text")) for u in replay] == [
        ("user_message_chunk", "Hi"),
        ("agent_message_chunk", "Hello."),
    ]


async def test_a_file_link_to_an_image_goes_to_the_model_as_an_image(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    shot = workdir / "screen shot.png"
    shot.write_bytes(base64.b64decode(PNG))
    link = ResourceContentBlock(
        type="resource_link", uri=shot.as_uri(), name=shot.name, mime_type="image/png"
    )
    server.script(stream(text("A pixel.")))
    async with spawn(anthropic_env(server)) as agent:
        sid = await open_session(agent, workdir)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("see"), link])
    assert server.requests[0].messages[0]["content"][1] == api_image("image/png", PNG)
    server.assert_script_consumed()
