"""OpenAIChatClient's credentials: no key sends nothing, a local server gets a placeholder."""

import pytest

from adapters.llm.openai_chat import PLACEHOLDER_KEY, OpenAIChatClient, make_openai_client
from application.errors import ModelAuthFailed
from domain.content import TextBlock
from tests.integration.openai.support import KEY_ENV, collect, final
from tests.support.scripted_openai import ScriptedOpenAI, auth_failed, stream, text

pytestmark = pytest.mark.integration


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
