"""OpenAIChatClient with the real `openai` SDK against the scripted chat-completions API.
What every adapter must do is in tests/contract; here is what is particular to this one."""

import base64
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime

import pytest
from openai import AsyncOpenAI

from adapters.llm.openai_chat import PLACEHOLDER_KEY, OpenAIChatClient, make_openai_client
from adapters.llm.openai_replies import INVALID_ARGUMENTS
from adapters.llm.providers import Dialect
from application.errors import (
    ContextOverflow,
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
)
from application.ports.llm import ModelEvent, ModelRequest, ModelResponse, ThinkingChunk
from application.ports.tools import ToolDefinition
from domain.content import (
    ImageBlock,
    RedactedThinkingBlock,
    ResourceLinkBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.ids import MessageId
from domain.message import Message, Role
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.support.scripted_openai import (
    RawSSE,
    ScriptedOpenAI,
    assert_valid_chat,
    auth_failed,
    http_error,
    rate_limited,
    reasoning,
    server_error,
    stream,
    text,
    tool_call,
)

pytestmark = pytest.mark.integration

API_KEY = "sk-test-key-s3cr3t"
KEY_ENV = "DASHSCOPE_API_KEY"
MODEL = "qwen-test"
MAX_RETRIES = 2

MakeLLM = Callable[..., Awaitable[OpenAIChatClient]]


def message(role: Role, *blocks: object, n: int = 1) -> Message:
    return Message(
        id=MessageId(f"m{n}"),
        role=role,
        content=tuple(blocks),  # type: ignore[arg-type]
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def request(*messages: Message, **options: object) -> ModelRequest:
    if not messages:
        messages = (message(Role.USER, TextBlock(text="Hello")),)
    return ModelRequest(
        model=MODEL,
        system="You are iac-code.",
        messages=messages,
        max_tokens=options.pop("max_tokens", 1024),  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )


async def collect(llm: OpenAIChatClient, req: ModelRequest | None = None) -> list[ModelEvent]:
    return [event async for event in llm.stream(req or request())]


def final(events: list[ModelEvent]) -> ModelResponse:
    assert isinstance(events[-1], ModelResponse), events
    return events[-1]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted
        scripted.assert_script_consumed()


@pytest.fixture
async def make_llm(server: ScriptedOpenAI) -> AsyncIterator[MakeLLM]:
    clients: list[AsyncOpenAI] = []

    async def make(
        *, dialect: Dialect = Dialect.DASHSCOPE, max_retries: int = MAX_RETRIES
    ) -> OpenAIChatClient:
        client = make_openai_client(
            api_key=API_KEY, base_url=server.base_url, max_retries=max_retries, timeout=5.0
        )
        assert client is not None
        clients.append(client)
        return OpenAIChatClient(client=client, dialect=dialect, key_env=KEY_ENV)

    yield make
    for client in clients:
        await client.close()


# --- the stream ---------------------------------------------------------------------------------


async def test_usage_counts_cached_prompt_tokens_apart(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Hi"), prompt_tokens=1200, completion_tokens=7, cached_tokens=1000))
    events = await collect(await make_llm())

    assert final(events).usage == Usage(input_tokens=200, output_tokens=7, cache_read_tokens=1000)
    assert server.last_request.body["stream_options"] == {"include_usage": True}


async def test_deepseek_cache_hits_count_as_cache_reads(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    server.script(
        RawSSE(
            payloads=[
                {**chunk, "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {
                    **chunk,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": 50,
                        "completion_tokens": 2,
                        "total_tokens": 52,
                        "prompt_cache_hit_tokens": 40,
                        "prompt_cache_miss_tokens": 10,
                    },
                },
                "[DONE]",
            ]
        )
    )
    events = await collect(await make_llm(dialect=Dialect.DEEPSEEK))

    assert final(events).usage == Usage(input_tokens=10, output_tokens=2, cache_read_tokens=40)


async def test_a_stream_without_usage_or_finish_reason_still_ends(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    server.script(
        RawSSE(payloads=[{**chunk, "choices": [{"index": 0, "delta": {"content": "ok"}}]}])
    )
    events = await collect(await make_llm())

    assert final(events) == ModelResponse(
        content=(TextBlock(text="ok"),), stop=ModelStop.END_TURN, usage=Usage()
    )


async def test_the_reasoning_field_of_ollama_is_thinking_too(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(stream(reasoning("Hmm", ".", field="reasoning"), text("Done")))
    events = await collect(await make_llm(dialect=Dialect.GENERIC))

    assert [e.text for e in events if isinstance(e, ThinkingChunk)] == ["Hmm", "."]
    assert final(events).content == (ThinkingBlock(thinking="Hmm."), TextBlock(text="Done"))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.py"', {INVALID_ARGUMENTS: '{"path": "a.py"'}),
        ("[1, 2]", {INVALID_ARGUMENTS: "[1, 2]"}),
        ("", {}),
    ],
    ids=["truncated", "not-an-object", "empty"],
)
async def test_tool_arguments_that_are_not_a_json_object_do_not_fail_the_stream(
    server: ScriptedOpenAI, make_llm: MakeLLM, raw: str, expected: dict[str, object]
) -> None:
    server.script(stream(tool_call("read_file", raw, id="call_x", chunks=2)))
    events = await collect(await make_llm())

    assert final(events).content == (ToolUseBlock(id="call_x", name="read_file", input=expected),)
    assert final(events).stop is ModelStop.TOOL_USE


async def test_tool_calls_after_a_stop_finish_still_continue_the_turn(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    # Some servers (older vLLM, Ollama) finish with "stop" after streaming tool calls.
    server.script(stream(tool_call("ls", {"path": "."}), finish_reason="stop"))
    events = await collect(await make_llm())

    assert final(events).stop is ModelStop.TOOL_USE


# --- the request --------------------------------------------------------------------------------


async def test_the_history_becomes_chat_messages(server: ScriptedOpenAI, make_llm: MakeLLM) -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    history = (
        message(
            Role.USER,
            TextBlock(text="Look:"),
            ImageBlock(mime_type="image/png", data=png),
            ResourceLinkBlock(uri="file:///a.txt", name="a.txt"),
        ),
        message(
            Role.ASSISTANT,
            ThinkingBlock(thinking="secret thoughts", signature="sig"),
            RedactedThinkingBlock(data="opaque"),
            TextBlock(text="Reading both."),
            ToolUseBlock(id="t1", name="read_file", input={"path": "a"}),
            ToolUseBlock(id="t2", name="read_file", input={"path": "b"}),
            n=2,
        ),
        message(
            Role.USER,
            ToolResultBlock(tool_use_id="t1", content="A"),
            ToolResultBlock(tool_use_id="t2", content="no such file", is_error=True),
            TextBlock(text="And now?"),
            n=3,
        ),
    )
    server.script(stream(text("ok")))
    await collect(await make_llm(), request(*history))

    sent = server.last_request.messages
    assert_valid_chat(sent)
    assert sent == [
        {"role": "system", "content": "You are iac-code."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
                {"type": "text", "text": "[resource link: a.txt <file:///a.txt>]"},
            ],
        },
        {
            "role": "assistant",
            "content": "Reading both.",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                },
                {
                    "id": "t2",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "b"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "A"},
        {"role": "tool", "tool_call_id": "t2", "content": "Error: no such file"},
        {"role": "user", "content": "And now?"},
    ]
    assert "secret thoughts" not in str(server.last_request.body)


async def test_an_assistant_turn_of_only_tool_calls_has_null_content(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    history = (
        message(Role.USER, TextBlock(text="go")),
        message(Role.ASSISTANT, ToolUseBlock(id="t1", name="ls", input={}), n=2),
        message(Role.USER, ToolResultBlock(tool_use_id="t1", content="x"), n=3),
    )
    server.script(stream(text("ok")))
    await collect(await make_llm(), request(*history))

    sent = server.last_request.messages
    assert_valid_chat(sent)
    assert sent[2]["content"] is None
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]


async def test_tools_are_function_definitions(server: ScriptedOpenAI, make_llm: MakeLLM) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tool = ToolDefinition(name="read_file", description="Reads a file.", input_schema=schema)
    server.script(stream(text("ok")))
    await collect(await make_llm(), request(tools=(tool,)))

    assert server.last_request.body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read_file", "description": "Reads a file.", "parameters": schema},
        }
    ]


@pytest.mark.parametrize(
    ("dialect", "options", "expected", "absent"),
    [
        (Dialect.OPENAI, {}, {"max_completion_tokens": 1024}, ["max_tokens"]),
        (
            Dialect.OPENAI,
            {"reasoning_effort": "high"},
            {"reasoning_effort": "high"},
            ["enable_thinking"],
        ),
        (Dialect.DEEPSEEK, {}, {"max_tokens": 1024}, ["max_completion_tokens"]),
        (
            Dialect.DASHSCOPE,
            {"thinking_budget": 4000},
            {"enable_thinking": True, "thinking_budget": 4000},
            ["reasoning_effort"],
        ),
        (Dialect.DASHSCOPE, {}, {"max_tokens": 1024}, ["enable_thinking", "reasoning_effort"]),
        (Dialect.GENERIC, {"thinking_budget": 4000}, {}, ["enable_thinking"]),
    ],
    ids=["openai", "openai-effort", "deepseek", "dashscope-thinking", "dashscope", "generic"],
)
async def test_each_dialect_gets_its_own_options(
    server: ScriptedOpenAI,
    make_llm: MakeLLM,
    dialect: Dialect,
    options: dict[str, object],
    expected: dict[str, object],
    absent: list[str],
) -> None:
    server.script(stream(text("ok")))
    await collect(await make_llm(dialect=dialect), request(**options))

    body = server.last_request.body
    assert {k: body.get(k) for k in expected} == expected
    assert [k for k in absent if k in body] == []


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_a_rejected_key_names_its_variable_and_never_the_key(
    server: ScriptedOpenAI, make_llm: MakeLLM, status: int
) -> None:
    server.script(
        auth_failed(f"Incorrect API key provided: {API_KEY}.")
        if status == 401
        else http_error(403, "Access denied.", error_type="access_denied")
    )

    with pytest.raises(ModelAuthFailed) as caught:
        await collect(await make_llm())

    assert f"rejected the key in {KEY_ENV} ({status})" in str(caught.value)
    assert API_KEY not in str(caught.value)
    assert caught.value.details == {"status": status}


async def test_persistent_server_errors_are_unavailable_after_the_retries(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(*[server_error("upstream exploded")] * (MAX_RETRIES + 1))

    with pytest.raises(ModelUnavailable) as caught:
        await collect(await make_llm())

    assert len(server.requests) == MAX_RETRIES + 1
    assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0", "1", "2"]
    assert "(500): upstream exploded" in str(caught.value)


async def test_persistent_rate_limits_are_rate_limited(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(*[rate_limited("slow down")] * (MAX_RETRIES + 1))

    with pytest.raises(ModelRateLimited) as caught:
        await collect(await make_llm())

    assert caught.value.details == {"status": 429}
    assert "slow down" in str(caught.value)


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            http_error(
                404,
                "The model `nope` does not exist",
                error_type="invalid_request_error",
                code="model_not_found",
            ),
            ModelRequestRejected,
        ),
        (
            http_error(
                400,
                "Range of input length should be [1, 129024]",
                error_type="invalid_request_error",
            ),
            ContextOverflow,
        ),
        (
            http_error(
                400, "'messages' must contain the word 'json'", error_type="invalid_request_error"
            ),
            ModelRequestRejected,
        ),
    ],
    ids=["404", "dashscope-overflow", "400"],
)
async def test_client_errors_are_not_retried(
    server: ScriptedOpenAI, make_llm: MakeLLM, reply: object, error: type[ModelError]
) -> None:
    server.script(reply)  # type: ignore[arg-type]

    with pytest.raises(error) as caught:
        await collect(await make_llm())

    assert type(caught.value) is error
    assert len(server.requests) == 1


async def test_an_error_inside_the_stream_is_unavailable_after_the_chunks(
    server: ScriptedOpenAI, make_llm: MakeLLM
) -> None:
    server.script(stream(text("Par", "tial"), error=("server_error", "model crashed")))
    events: list[ModelEvent] = []

    with pytest.raises(ModelUnavailable, match="model crashed"):
        async for event in (await make_llm()).stream(request()):
            events.append(event)

    assert not any(isinstance(e, ModelResponse) for e in events)


async def test_no_server_listening_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_openai_client(
        api_key=API_KEY, base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=2.0
    )
    assert client is not None
    try:
        with pytest.raises(ModelUnavailable):
            await collect(OpenAIChatClient(client=client))
    finally:
        await client.close()


# --- credentials ----------------------------------------------------------------------------


async def test_without_a_key_nothing_is_sent_and_the_variable_is_named(
    server: ScriptedOpenAI,
) -> None:
    client = make_openai_client(api_key=None, base_url=server.base_url, max_retries=0, timeout=1.0)
    llm = OpenAIChatClient(client=client, key_env=KEY_ENV)

    assert client is None
    assert not llm.has_credentials()
    with pytest.raises(ModelAuthFailed, match=KEY_ENV):
        await collect(llm)
    assert server.requests == []


async def test_a_local_server_without_a_key_gets_a_placeholder(server: ScriptedOpenAI) -> None:
    client = make_openai_client(
        api_key=None, base_url=server.base_url, max_retries=0, timeout=5.0, key_optional=True
    )
    assert client is not None
    server.script(stream(text("local")))
    try:
        events = await collect(OpenAIChatClient(client=client))
    finally:
        await client.close()

    assert final(events).content == (TextBlock(text="local"),)
    assert server.last_request.headers["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


async def test_a_key_of_any_shape_quoted_back_is_struck_out(server: ScriptedOpenAI) -> None:
    key = "plainsecret0123456789"
    client = make_openai_client(api_key=key, base_url=server.base_url, max_retries=0, timeout=5.0)
    assert client is not None
    server.script(auth_failed(f"Invalid key {key} for this workspace"))
    try:
        with pytest.raises(ModelAuthFailed) as caught:
            await collect(OpenAIChatClient(client=client, key_env="IAC_CODE_API_KEY"))
    finally:
        await client.close()

    assert key not in str(caught.value)
    assert "Invalid key [redacted] for this workspace" in str(caught.value)
