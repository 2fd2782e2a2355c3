"""OpenAIChatClient's errors: rejected keys, the SDK's retries, broken streams, no server."""

import socket

import pytest

from adapters.llm.openai_chat import OpenAIChatClient, make_openai_client
from application.errors import (
    ContextOverflow,
    ModelAuthFailed,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelUnavailable,
)
from application.ports.llm import ModelEvent, ModelResponse
from tests.integration.openai.support import (
    API_KEY,
    KEY_ENV,
    MAX_RETRIES,
    MakeLLM,
    collect,
    request,
)
from tests.support.scripted_openai import (
    ScriptedOpenAI,
    auth_failed,
    http_error,
    rate_limited,
    server_error,
    stream,
    text,
)

pytestmark = pytest.mark.integration


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
