"""The scripted Messages API and adapters on real SDK clients pointed at it."""

from collections.abc import AsyncIterator, Iterator

import pytest
from anthropic import AsyncAnthropic

from adapters.llm.anthropic import AnthropicLLMClient, make_anthropic_client
from tests.integration.anthropic.support import API_KEY, MAX_RETRIES, MakeLLM
from tests.support.scripted_anthropic import ScriptedAnthropic


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
