"""Prompt caching through AnthropicLLMClient: where the breakpoints go and what the cache reads."""

import copy
from collections.abc import Iterator

import pytest

from adapters.llm.anthropic import (
    AnthropicLLMClient,
    make_anthropic_client,
    messages_to_api,
    system_to_api,
    tools_to_api,
    with_cache_breakpoint,
)
from application.ports.llm import ModelRequest
from application.ports.tools import ToolDefinition
from domain.content import (
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from domain.message import Message, Role
from tests.integration.anthropic.support import (
    API_KEY,
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
    tool_use,
)

pytestmark = pytest.mark.integration


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
