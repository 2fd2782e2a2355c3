"""AnthropicLLMClient with the real `anthropic` SDK against the scripted Messages API."""

import asyncio
import base64
import copy
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from anthropic import AsyncAnthropic

from adapters.llm.anthropic import (
    AnthropicLLMClient,
    make_anthropic_client,
    messages_to_api,
    system_to_api,
    tools_to_api,
    with_cache_breakpoint,
)
from application.errors import (
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
)
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse, TextChunk, ThinkingChunk
from application.ports.tools import ToolDefinition
from domain.content import (
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.history import provider_view
from domain.ids import MessageId
from domain.message import Message, Role
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.support.model_chunks import joined
from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import (
    HANG,
    RawSSE,
    ScriptedAnthropic,
    api_error,
    assert_valid_cache_markers,
    assert_valid_history,
    auth_failed,
    http_error,
    overloaded,
    rate_limited,
    redacted_thinking,
    stream,
    stream_error,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.integration

API_KEY = "test-key-s3cr3t"
MODEL = "claude-test-model"
SYSTEM = "You are iac-code."
MAX_RETRIES = 2

MakeLLM = Callable[..., Awaitable[AnthropicLLMClient]]


def message(role: Role, *blocks: object, n: int = 1, interrupted: bool = False) -> Message:
    return Message(
        id=MessageId(f"m{n}"),
        role=role,
        content=tuple(blocks),  # type: ignore[arg-type]
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        interrupted=interrupted,
    )


def request(*messages: Message, max_tokens: int = 1024) -> ModelRequest:
    if not messages:
        messages = (message(Role.USER, TextBlock(text="Hello")),)
    return ModelRequest(model=MODEL, system=SYSTEM, messages=messages, max_tokens=max_tokens)


async def collect(llm: AnthropicLLMClient, req: ModelRequest | None = None) -> list[ModelEvent]:
    return [event async for event in llm.stream(req or request())]


async def drain(llm: AnthropicLLMClient, into: list[ModelEvent]) -> None:
    """Like collect, but what arrived before an exception stays in `into`."""
    async for event in llm.stream(request()):
        into.append(event)


def final(events: list[ModelEvent]) -> ModelResponse:
    assert isinstance(events[-1], ModelResponse), events
    assert sum(isinstance(e, ModelResponse) for e in events) == 1, events
    return events[-1]


def chunks(events: list[ModelEvent], kind: type) -> list[str]:
    return [e.text for e in events if isinstance(e, kind)]


@pytest.fixture
def server() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as scripted:
        yield scripted
        scripted.assert_script_consumed()


@pytest.fixture
async def make_llm(server: ScriptedAnthropic) -> AsyncIterator[MakeLLM]:
    """Builds adapters on real SDK clients pointed at the server; closes the clients."""
    clients: list[AsyncAnthropic] = []

    async def make(*, max_retries: int = MAX_RETRIES, seconds: float = 5.0) -> AnthropicLLMClient:
        client = make_anthropic_client(
            api_key=API_KEY, base_url=server.base_url, max_retries=max_retries, timeout=seconds
        )
        assert client is not None
        clients.append(client)
        return AnthropicLLMClient(client=client)

    yield make
    for client in clients:
        await client.close()


# --- streaming and the final message ---------------------------------------------------------


async def test_text_deltas_arrive_in_order_then_the_whole_message(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hel", "lo, ", "world", "!"), input_tokens=12, output_tokens=4))
    events = await collect(await make_llm())

    assert joined(events[:-1]) == [TextChunk(text="Hello, world!", deltas=4)]
    assert final(events) == ModelResponse(
        content=(TextBlock(text="Hello, world!"),),
        stop=ModelStop.END_TURN,
        usage=Usage(input_tokens=12, output_tokens=4),
    )


async def test_chunks_are_yielded_while_the_stream_is_still_open(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    # The server holds the rest of the message back until the first chunk has arrived:
    # an adapter that buffered the stream would never yield it.
    release = threading.Event()
    server.script(stream(text("a"), HANG, text("b", "c"), release=release))
    llm = await make_llm()
    events = llm.stream(request())
    first = await asyncio.wait_for(anext(events), PATIENCE)
    assert first == TextChunk(text="a")
    assert not release.is_set()
    release.set()
    rest = [event async for event in events]
    assert joined(rest[:-1]) == [TextChunk(text="bc", deltas=2)]
    assert isinstance(rest[-1], ModelResponse)


async def test_thinking_deltas_then_text_and_signature_kept(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(
        stream(
            thinking("Let me ", "think.", signature="EqQBCgIYAhIM-signature"),
            redacted_thinking("ZW5jcnlwdGVk"),
            text("Answer."),
        )
    )
    thinks = replace(request(max_tokens=4096), thinking_budget=2048)
    events = await collect(await make_llm(), thinks)

    assert joined(events[:-1]) == [
        ThinkingChunk(text="Let me think.", deltas=2),
        TextChunk(text="Answer."),
    ]
    assert final(events).content == (
        ThinkingBlock(thinking="Let me think.", signature="EqQBCgIYAhIM-signature"),
        RedactedThinkingBlock(data="ZW5jcnlwdGVk"),
        TextBlock(text="Answer."),
    )
    assert server.last_request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert server.last_request.body["max_tokens"] == 4096


async def test_no_thinking_is_asked_for_without_a_budget(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hi.")))
    await collect(await make_llm())
    assert "thinking" not in server.last_request.body


@pytest.mark.parametrize(
    ("api_stop", "stop"),
    [
        ("end_turn", ModelStop.END_TURN),
        ("stop_sequence", ModelStop.END_TURN),
        ("max_tokens", ModelStop.MAX_TOKENS),
        ("model_context_window_exceeded", ModelStop.MAX_TOKENS),
        ("refusal", ModelStop.REFUSAL),
        ("pause_turn", ModelStop.PAUSE),
    ],
)
async def test_stop_reason_mapping(
    server: ScriptedAnthropic, make_llm: MakeLLM, api_stop: str, stop: ModelStop
) -> None:
    server.script(stream(text("partial"), stop_reason=api_stop))
    events = await collect(await make_llm())

    assert final(events).stop is stop
    assert final(events).content == (TextBlock(text="partial"),)


async def test_tool_use_block_with_streamed_json_input(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    tool_input = {"path": "src/main.tf", "lines": [1, 20], "options": {"follow": True}}
    server.script(
        stream(
            text("I'll read it."),
            tool_use("read_file", tool_input, id="toolu_01ABC", chunks=5),
            tool_use("list_dir", {}, id="toolu_02DEF"),
            stop_reason="tool_use",
        )
    )
    events = await collect(await make_llm())

    assert chunks(events, TextChunk) == ["I'll read it."]
    response = final(events)
    assert response.stop is ModelStop.TOOL_USE
    assert response.content == (
        TextBlock(text="I'll read it."),
        ToolUseBlock(id="toolu_01ABC", name="read_file", input=tool_input),
        ToolUseBlock(id="toolu_02DEF", name="list_dir", input={}),
    )


async def test_cache_token_usage(server: ScriptedAnthropic, make_llm: MakeLLM) -> None:
    server.script(
        stream(
            text("cached"),
            input_tokens=25,
            output_tokens=7,
            cache_read_input_tokens=1800,
            cache_creation_input_tokens=240,
        ),
        stream(text("no cache fields"), input_tokens=3, output_tokens=2),
    )
    llm = await make_llm()

    assert final(await collect(llm)).usage == Usage(
        input_tokens=25, output_tokens=7, cache_read_tokens=1800, cache_write_tokens=240
    )
    assert final(await collect(llm)).usage == Usage(input_tokens=3, output_tokens=2)


# --- the request the provider receives --------------------------------------------------------


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


# --- errors and the SDK's retries ---------------------------------------------------------------


async def test_overloaded_then_success_is_retried_by_the_sdk(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(overloaded(), stream(text("Recovered")))
    events = await collect(await make_llm())

    assert chunks(events, TextChunk) == ["Recovered"]
    assert final(events).content == (TextBlock(text="Recovered"),)
    requests = server.requests
    assert len(requests) == 2
    assert [r.headers["x-stainless-retry-count"] for r in requests] == ["0", "1"]
    assert requests[0].body == requests[1].body


async def test_persistent_500_is_unavailable_after_the_retries(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(*[api_error("Internal server error")] * (MAX_RETRIES + 1))
    llm = await make_llm(max_retries=MAX_RETRIES)

    with pytest.raises(ModelUnavailable) as caught:
        await collect(llm)

    assert len(server.requests) == MAX_RETRIES + 1
    assert caught.value.details == {"status": 500}
    assert "Internal server error" in str(caught.value)
    assert API_KEY not in str(caught.value)
    assert API_KEY not in repr(caught.value.details)


async def test_persistent_rate_limit_is_rate_limited(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(*[rate_limited()] * (MAX_RETRIES + 1))

    with pytest.raises(ModelRateLimited) as caught:
        await collect(await make_llm())

    assert len(server.requests) == MAX_RETRIES + 1
    assert caught.value.details == {"status": 429}


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (auth_failed(), ModelAuthFailed),
        (http_error(403, "permission_error", "not allowed"), ModelAuthFailed),
        (http_error(400, "invalid_request_error", "messages: bad"), ModelRequestRejected),
        (http_error(404, "not_found_error", "model: claude-nope"), ModelRequestRejected),
    ],
    ids=["401", "403", "400", "404"],
)
async def test_client_errors_are_not_retried(
    server: ScriptedAnthropic, make_llm: MakeLLM, reply: object, error: type[ModelError]
) -> None:
    server.script(reply)  # type: ignore[arg-type]

    with pytest.raises(error) as caught:
        await collect(await make_llm())

    assert type(caught.value) is error
    assert len(server.requests) == 1
    assert API_KEY not in str(caught.value)


async def test_mid_stream_overloaded_error_is_a_model_error_after_the_chunks(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream_error(text("Hel", "lo")))
    llm = await make_llm()
    events: list[ModelEvent] = []

    with pytest.raises(ModelError) as caught:
        await drain(llm, events)

    assert joined(events) == [TextChunk(text="Hello", deltas=2)]
    assert "Overloaded" in str(caught.value)
    assert len(server.requests) == 1  # a started stream is never retried by the SDK


async def test_mid_stream_overloaded_error_is_unavailable(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream_error(text("Hel", "lo")))

    with pytest.raises(ModelUnavailable):
        await collect(await make_llm())


async def test_read_timeout_mid_stream_is_unavailable(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hel"), HANG, text("lo")))

    with pytest.raises(ModelUnavailable):
        await collect(await make_llm(max_retries=0, seconds=0.3))


async def test_connection_lost_mid_stream_is_unavailable(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hel"), HANG, text("lo")))
    llm = await make_llm(max_retries=0)
    seen: list[ModelEvent] = []
    task = asyncio.create_task(drain(llm, seen))
    await asyncio.to_thread(server.wait_for_hang)
    await asyncio.to_thread(server.stop)  # ends the hanging stream mid-body
    try:
        with pytest.raises(ModelUnavailable):
            await task
    finally:
        assert seen == [TextChunk(text="Hel")]


async def test_cancelling_mid_stream_closes_the_connection(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hel"), HANG, text("lo")), stream(text("Next")))
    llm = await make_llm()
    seen: list[ModelEvent] = []
    first_chunk = asyncio.Event()

    async def consume() -> None:
        async for event in llm.stream(request()):
            seen.append(event)
            first_chunk.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_chunk.wait(), PATIENCE)
    await asyncio.to_thread(server.wait_for_hang)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert seen == [TextChunk(text="Hel")]
    await asyncio.to_thread(server.wait_for_disconnect)
    # The client is still usable after an abandoned stream.
    assert chunks(await collect(llm), TextChunk) == ["Next"]


async def test_a_stream_that_stalls_then_resumes_completes(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    resume = threading.Event()
    server.script(stream(text("Hel"), HANG, text("lo"), release=resume))
    llm = await make_llm()
    task = asyncio.create_task(collect(llm))

    await asyncio.to_thread(server.wait_for_hang)
    assert server.hanging == 1
    resume.set()
    events = await asyncio.wait_for(task, PATIENCE)

    assert chunks(events, TextChunk) == ["Hel", "lo"]
    assert final(events).content == (TextBlock(text="Hel"), TextBlock(text="lo"))
    assert server.hanging == 0
    assert server.client_disconnects == 0


# --- credentials and the scripted server itself -----------------------------------------------


async def test_without_credentials_nothing_is_sent(server: ScriptedAnthropic) -> None:
    client = make_anthropic_client(api_key=None, base_url=server.base_url, max_retries=0, timeout=1)
    assert client is None
    llm = AnthropicLLMClient(client=client)

    assert llm.has_credentials() is False
    with pytest.raises(ModelAuthFailed):
        await collect(llm)
    assert server.requests == []


async def test_an_unscripted_request_fails_loudly_without_retries() -> None:
    with ScriptedAnthropic() as lonely:
        client = make_anthropic_client(
            api_key=API_KEY, base_url=lonely.base_url, max_retries=MAX_RETRIES, timeout=5
        )
        assert client is not None
        try:
            with pytest.raises(ModelUnavailable, match="script exhausted"):
                await collect(AnthropicLLMClient(client=client))
        finally:
            await client.close()

        assert len(lonely.requests) == 1
        with pytest.raises(AssertionError, match="unexpected request"):
            lonely.assert_script_consumed()


def test_the_api_shapes_of_the_adapter_pass_the_history_check() -> None:
    conversation = [
        message(Role.USER, TextBlock(text="hi")),
        message(
            Role.ASSISTANT,
            ThinkingBlock(thinking="t", signature="s"),
            ToolUseBlock(id="a", name="x"),
            ToolUseBlock(id="b", name="y"),
        ),
        message(
            Role.USER,
            ToolResultBlock(tool_use_id="b", content="2"),
            ToolResultBlock(tool_use_id="a", content="1", is_error=True),
            TextBlock(text="and then?"),
        ),
    ]
    assert_valid_history(messages_to_api(conversation))


def _user(*blocks: dict) -> dict:
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks: dict) -> dict:
    return {"role": "assistant", "content": list(blocks)}


_TEXT = {"type": "text", "text": "hi"}
_USE = {"type": "tool_use", "id": "t1", "name": "run", "input": {}}
_RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}


@pytest.mark.parametrize(
    ("messages", "complaint"),
    [
        ([], "empty conversation"),
        ([_assistant(_TEXT)], r"messages\[0\]: the conversation must start with a user"),
        ([_user(_TEXT), _user(_TEXT)], r"messages\[1\]: two user messages in a row"),
        ([_user()], r"messages\[0\]\.content: empty content list"),
        ([_user({"type": "text", "text": " "})], r"messages\[0\]\.content\[0\]: text block"),
        (
            [_user(_TEXT), _assistant({"type": "thinking", "thinking": "x", "signature": ""})],
            r"messages\[1\]\.content\[0\]: thinking block without a signature",
        ),
        (
            [_user(_TEXT), _assistant(_USE), _user(_TEXT)],
            r"messages\[2\]: tool_use id\(s\) \['t1'\] from messages\[1\] have no tool_result",
        ),
        (
            [_user(_TEXT), _assistant(_USE), _user(_TEXT, _RESULT)],
            r"messages\[2\]\.content\[0\]: tool_result blocks must come before",
        ),
        ([_user(_RESULT)], r"messages\[0\]\.content\[0\]: tool_result for 't1' does not answer"),
        ([_user(_TEXT), _assistant(_USE)], r"messages\[1\]: tool_use id\(s\) \['t1'\] are never"),
        (
            [_user(_TEXT), _assistant(_TEXT), _user(_RESULT)],
            r"messages\[2\]\.content\[0\]: tool_result for 't1'",
        ),
    ],
)
def test_history_check_rejects_what_the_provider_rejects(messages: list, complaint: str) -> None:
    with pytest.raises(AssertionError, match=complaint):
        assert_valid_history(messages)


# --- images ----------------------------------------------------------------------------------

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
GIF = base64.b64encode(b"GIF89a" + bytes(64)).decode()


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


# --- prompt caching ----------------------------------------------------------------------------

EPHEMERAL = {"type": "ephemeral"}
TOOLS = (
    ToolDefinition(name="read_file", description="Read a file.", input_schema={"type": "object"}),
    ToolDefinition(name="list_dir", description="List a directory.", input_schema={}),
)
READ_README = message(Role.USER, TextBlock(text="Read the README " * 40), n=1)
CALL = message(
    Role.ASSISTANT,
    ThinkingBlock(thinking="I should read it.", signature="sig-abc"),
    ToolUseBlock(id="toolu_1", name="read_file", input={"path": "README.md"}),
    n=2,
)
RESULT = message(Role.USER, ToolResultBlock(tool_use_id="toolu_1", content="# iac-code " * 90), n=3)


def tool_request(*messages: Message, system: str = SYSTEM) -> ModelRequest:
    return ModelRequest(model=MODEL, system=system, messages=messages, max_tokens=1024, tools=TOOLS)


def test_the_system_prompt_and_the_last_tool_carry_a_breakpoint() -> None:
    assert system_to_api(SYSTEM) == [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
    assert system_to_api("") == ""  # the API refuses an empty text block
    tools = tools_to_api(TOOLS)
    assert [t.get("cache_control") for t in tools] == [None, EPHEMERAL]
    assert tools[0] == {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object"},
    }
    assert tools_to_api(()) == []


@pytest.mark.parametrize(
    ("role", "blocks", "marked"),
    [
        (Role.USER, [TextBlock(text="a"), TextBlock(text="b")], (1, 1)),
        (Role.USER, [ToolResultBlock(tool_use_id="t", content="r"), TextBlock(text="b")], (1, 1)),
        (Role.USER, [ToolResultBlock(tool_use_id="t", content="r")], (1, 0)),
        (Role.USER, [ImageBlock(mime_type="image/png", data=PNG)], (1, 0)),
        # An assistant message last (a prefill): thinking cannot carry a breakpoint.
        (
            Role.ASSISTANT,
            [ToolUseBlock(id="t", name="x"), ThinkingBlock(thinking="t", signature="s")],
            (1, 0),
        ),
        (
            Role.ASSISTANT,
            [ThinkingBlock(thinking="t", signature="s"), RedactedThinkingBlock(data="d")],
            (0, 0),
        ),
    ],
)
def test_the_conversation_breakpoint_is_on_the_last_block_that_can_carry_one(
    role: Role, blocks: list, marked: tuple[int, int]
) -> None:
    conversation = [message(Role.USER, TextBlock(text="first")), message(role, *blocks)]
    plain = messages_to_api(conversation)
    before = copy.deepcopy(plain)

    result = with_cache_breakpoint(plain)

    assert plain == before  # the input is not touched
    assert all("cache_control" not in b for m in plain for b in m["content"])
    places = [
        (i, j)
        for i, m in enumerate(result)
        for j, b in enumerate(m["content"])
        if b.get("cache_control") == EPHEMERAL
    ]
    assert places == [marked]
    assert _without_marker(result) == plain


def _without_marker(messages: list[dict]) -> list[dict]:
    return [
        {
            **m,
            "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]],
        }
        for m in messages
    ]


def test_a_conversation_without_a_cacheable_block_gets_no_breakpoint() -> None:
    only_thinking = [{"role": "assistant", "content": [{"type": "redacted_thinking", "data": "d"}]}]
    assert with_cache_breakpoint(only_thinking) == only_thinking
    assert with_cache_breakpoint([]) == []


async def test_the_request_carries_three_breakpoints_none_on_thinking(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    server.script(stream(text("ok")), stream(text("ok")))
    llm = await make_llm()
    final(await collect(llm, tool_request(READ_README, CALL, RESULT)))
    final(await collect(llm, request(READ_README)))  # no tools

    with_tools, without = server.requests
    assert with_tools.cache_markers == ["tools[1]", "system[0]", "messages[2].content[0]"]
    assert without.cache_markers == ["system[0]", "messages[0].content[0]"]
    for sent in server.requests:
        assert_valid_cache_markers(sent.body)
        assert_valid_history(sent.body["messages"])
        assert sent.system == SYSTEM
    # The conversation itself is what it was before caching.
    assert with_tools.messages == messages_to_api([READ_README, CALL, RESULT])
    assert with_tools.body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "I should read it.",
        "signature": "sig-abc",
    }


@pytest.fixture
def caching_server() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic(cache=True) as scripted:
        yield scripted
        scripted.assert_script_consumed()


async def test_the_second_request_of_a_turn_reads_the_first_from_the_cache(
    caching_server: ScriptedAnthropic,
) -> None:
    caching_server.script(
        stream(tool_use("read_file", {"path": "README.md"}, id="toolu_1"), stop_reason="tool_use"),
        stream(text("It is a README.")),
    )
    client = make_anthropic_client(
        api_key=API_KEY, base_url=caching_server.base_url, max_retries=0, timeout=5.0
    )
    assert client is not None
    llm = AnthropicLLMClient(client=client)
    try:
        first = final(await collect(llm, tool_request(READ_README)))
        second = final(await collect(llm, tool_request(READ_README, CALL, RESULT)))
    finally:
        await client.close()

    # The first request wrote its whole prefix; the second read exactly that back and
    # wrote only what the tool call and its result added.
    assert first.usage.cache_read_tokens == 0
    assert first.usage.cache_write_tokens > 0
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    assert second.usage.cache_write_tokens > 0
    assert [r.usage for r in caching_server.requests] == [
        {
            "input_tokens": u.input_tokens,
            "cache_read_input_tokens": u.cache_read_tokens,
            "cache_creation_input_tokens": u.cache_write_tokens,
        }
        for u in (first.usage, second.usage)
    ]


async def test_the_simulated_cache_reads_only_an_exact_prefix(
    caching_server: ScriptedAnthropic,
) -> None:
    caching_server.script(stream(text("a")), stream(text("b")), stream(text("c")))
    client = make_anthropic_client(
        api_key=API_KEY, base_url=caching_server.base_url, max_retries=0, timeout=5.0
    )
    assert client is not None
    llm = AnthropicLLMClient(client=client)
    try:
        first = final(await collect(llm, tool_request(READ_README)))
        # Another system prompt (a mode change): only the tools before it are read.
        other = final(await collect(llm, tool_request(READ_README, system="In plan mode.")))
        same = final(await collect(llm, tool_request(READ_README)))
    finally:
        await client.close()

    assert 0 < other.usage.cache_read_tokens < first.usage.cache_write_tokens
    assert other.usage.cache_write_tokens > 0
    assert same.usage.cache_read_tokens == first.usage.cache_write_tokens
    assert same.usage.cache_write_tokens == 0


# --- the event stream, read by the adapter itself ---------------------------------------------


async def test_a_stream_that_ends_before_message_stop_is_unavailable(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    whole = stream(text("Hel", "lo")).events()
    server.script(RawSSE(events=[e for e in whole if e[0] != "message_stop"]))
    seen: list[ModelEvent] = []

    with pytest.raises(ModelUnavailable):
        await drain(await make_llm(), seen)

    assert joined(seen) == [TextChunk(text="Hello", deltas=2)]


async def test_events_split_across_reads_and_unknown_events_are_read_alike(
    server: ScriptedAnthropic, make_llm: MakeLLM
) -> None:
    whole = stream(text("a" * 5000, "é" * 3000), tool_use("read_file", {"path": "x"})).events()
    server.script(RawSSE(events=[("future_event", {"type": "future_event"}), *whole]))

    events = await collect(await make_llm())

    assert joined(events)[0] == TextChunk(text="a" * 5000 + "é" * 3000, deltas=2)
    assert final(events).content == (
        TextBlock(text="a" * 5000 + "é" * 3000),
        ToolUseBlock(id=final(events).content[1].id, name="read_file", input={"path": "x"}),
    )
