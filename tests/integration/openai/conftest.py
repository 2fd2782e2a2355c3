"""The scripted chat-completions API and adapters on real SDK clients pointed at it."""

from collections.abc import AsyncIterator, Iterator

import pytest
from openai import AsyncOpenAI

from adapters.llm.openai_chat import OpenAIChatClient, make_openai_client
from adapters.llm.providers import Dialect
from tests.integration.openai.support import API_KEY, KEY_ENV, MAX_RETRIES, MakeLLM
from tests.support.scripted_openai import ScriptedOpenAI


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
