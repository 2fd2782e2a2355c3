"""AnthropicLLMClient's errors and the SDK's retries, broken streams, credentials, the reader."""

import asyncio
import threading

import pytest

from adapters.llm.anthropic import AnthropicLLMClient, make_anthropic_client
from application.errors import (
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
)
from application.ports.llm import ModelEvent, TextChunk
from domain.content import TextBlock, ToolUseBlock
from tests.integration.anthropic.support import (
    API_KEY,
    MAX_RETRIES,
    MakeLLM,
    chunks,
    collect,
    drain,
    final,
    request,
)
from tests.support.model_chunks import joined
from tests.support.patience import PATIENCE
from tests.support.scripted_anthropic import (
    HANG,
    RawSSE,
    ScriptedAnthropic,
    api_error,
    auth_failed,
    http_error,
    overloaded,
    rate_limited,
    stream,
    stream_error,
    text,
    tool_use,
)

pytestmark = pytest.mark.integration


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
