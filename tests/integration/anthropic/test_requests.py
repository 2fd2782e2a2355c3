"""What the provider receives from AnthropicLLMClient: the converted conversation, images."""

import pytest

from domain.content import ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.history import provider_view
from domain.message import Role
from tests.integration.anthropic.support import (
    API_KEY,
    GIF,
    MODEL,
    PNG,
    SYSTEM,
    MakeLLM,
    collect,
    final,
    message,
    request,
)
from tests.support.scripted_anthropic import (
    ScriptedAnthropic,
    assert_valid_cache_markers,
    assert_valid_history,
    stream,
    text,
)

pytestmark = pytest.mark.integration


async def test_request_body_converts_the_domain_conversation(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    conversation = (
        message(Role.USER, TextBlock(text="Read the README"), n=1),
        message(
            Role.ASSISTANT,
            ThinkingBlock(thinking="I should read it.", signature="sig-abc"),
            TextBlock(text="Reading it."),
            ToolUseBlock(id="toolu_1", name="read_file", input={"path": "README.md"}),
            n=2,
        ),
        message(Role.USER, ToolResultBlock(tool_use_id="toolu_1", content="# iac-code"), n=3),
    )
    server.script(stream(text("It is a README.")))
    await collect(await make_llm(), request(*conversation, max_tokens=777))

    sent = server.last_request
    assert sent.method == "POST"
    assert sent.path == "/v1/messages"
    assert API_KEY in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "")[7:])
    assert "anthropic-version" in sent.headers
    assert sent.body["model"] == MODEL
    assert sent.body["max_tokens"] == 777
    assert sent.body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert sent.system == SYSTEM
    assert sent.body["stream"] is True
    assert "thinking" not in sent.body  # no budget configured
    assert sent.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Read the README"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should read it.", "signature": "sig-abc"},
                {"type": "text", "text": "Reading it."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "read_file",
                    "input": {"path": "README.md"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "# iac-code",
                    "is_error": False,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        },
    ]
    assert_valid_history(sent.body["messages"])
    assert_valid_cache_markers(sent.body)


async def test_messy_stored_history_reaches_the_provider_in_an_acceptable_shape(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    stored = (
        message(Role.USER, TextBlock(text="Do it"), n=1),
        message(  # cut short by a cancel: unsigned thinking and an unanswered tool use
            Role.ASSISTANT,
            ThinkingBlock(thinking="hmm"),
            TextBlock(text="Working"),
            ToolUseBlock(id="toolu_x", name="run", input={}),
            n=2,
            interrupted=True,
        ),
        message(Role.USER, TextBlock(text="   "), n=3),
        message(Role.USER, TextBlock(text="Try again"), n=4),
        message(Role.USER, ToolResultBlock(tool_use_id="toolu_orphan", content="?"), n=5),
    )
    server.script(stream(text("OK")))
    await collect(await make_llm(), request(*provider_view(stored)))

    assert_valid_history(server.last_request.messages)


async def test_an_image_reaches_the_provider_as_base64_image_content(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("A black square.")))
    prompt = message(
        Role.USER, TextBlock(text="What is this?"), ImageBlock(mime_type="image/png", data=PNG)
    )
    final(await collect(await make_llm(), request(*provider_view([prompt]))))
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
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("ok")), stream(text("ok")))
    history = [
        message(Role.USER, ImageBlock(mime_type="image/gif", data=GIF), n=1),
        message(Role.ASSISTANT, TextBlock(text="A GIF."), n=2),
        # No data: stored before images were sent.
        message(Role.USER, TextBlock(text="And now?"), ImageBlock(mime_type="image/png"), n=3),
    ]
    llm = await make_llm()
    final(await collect(llm, request(*provider_view(history))))
    final(await collect(llm, request(*provider_view(history, images=False))))
    reads, text_only = (r.messages for r in server.requests)
    assert reads[0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF}}
    ]
    assert reads[2]["content"][1] == {"type": "text", "text": "[image: image/png]"}
    assert text_only[0]["content"] == [{"type": "text", "text": "[image: image/gif]"}]
    for messages in (reads, text_only):
        assert_valid_history(messages)
