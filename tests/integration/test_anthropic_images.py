"""Images through AnthropicLLMClient and the real SDK to the scripted Messages API."""

import base64
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest

from adapters.llm.anthropic import AnthropicLLMClient, make_anthropic_client
from application.ports.llm import ModelRequest, ModelResponse
from domain.content import ImageBlock, TextBlock
from domain.history import provider_view
from domain.ids import MessageId
from domain.message import Message, Role
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    assert_valid_history,
    stream,
    text,
)

pytestmark = pytest.mark.integration

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
GIF = base64.b64encode(b"GIF89a" + bytes(64)).decode()


@pytest.fixture
def server() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as scripted:
        yield scripted
        scripted.assert_script_consumed()


@pytest.fixture
async def llm(server: ScriptedAnthropic) -> AsyncIterator[AnthropicLLMClient]:
    client = make_anthropic_client(
        api_key="test-key", base_url=server.base_url, max_retries=0, timeout=5.0
    )
    assert client is not None
    yield AnthropicLLMClient(client=client)
    await client.close()


def user(n: int, *blocks: TextBlock | ImageBlock) -> Message:
    return Message(
        id=MessageId(f"m{n}"),
        role=Role.USER,
        content=blocks,
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
    )


async def send(llm: AnthropicLLMClient, messages: list[Message]) -> None:
    request = ModelRequest(
        model="claude-test", system="s", messages=tuple(messages), max_tokens=256
    )
    events = [event async for event in llm.stream(request)]
    assert isinstance(events[-1], ModelResponse)


async def test_an_image_reaches_the_provider_as_base64_image_content(
    server: ScriptedAnthropic, llm: AnthropicLLMClient
) -> None:
    server.script(stream(text("A black square.")))
    prompt = user(1, TextBlock(text="What is this?"), ImageBlock(mime_type="image/png", data=PNG))
    await send(llm, provider_view([prompt]))
    sent = server.requests[0].messages
    assert sent == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
            ],
        }
    ]
    assert_valid_history(sent)


async def test_images_of_earlier_prompts_are_sent_again_and_markers_for_a_text_only_model(
    server: ScriptedAnthropic, llm: AnthropicLLMClient
) -> None:
    server.script(stream(text("ok")), stream(text("ok")))
    history = [
        user(1, ImageBlock(mime_type="image/gif", data=GIF)),
        Message(
            id=MessageId("m2"),
            role=Role.ASSISTANT,
            content=(TextBlock(text="A GIF."),),
            created_at=datetime(2025, 1, 1, tzinfo=UTC),
        ),
        user(3, TextBlock(text="And now?"), ImageBlock(mime_type="image/png")),  # no data: old
    ]
    await send(llm, provider_view(history))
    await send(llm, provider_view(history, images=False))
    reads, text_only = (r.messages for r in server.requests)
    assert reads[0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF}}
    ]
    assert reads[2]["content"][1] == {"type": "text", "text": "[image: image/png]"}
    assert text_only[0]["content"] == [{"type": "text", "text": "[image: image/gif]"}]
    for messages in (reads, text_only):
        assert_valid_history(messages)
