"""The request the provider receives from OpenAIChatClient: messages, tools, dialect options."""

import base64

import pytest

from adapters.llm.providers import Dialect
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
from domain.message import Role
from tests.integration.openai.support import (
    MakeLLM,
    collect,
    message,
    request,
)
from tests.support.scripted_openai import (
    ScriptedOpenAI,
    assert_valid_chat,
    stream,
    text,
)

pytestmark = pytest.mark.integration


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
