"""A cancel or close read right behind its prompt (before the prompt's task ever ran)
applies to it: the prompt answers `cancelled` (issue 25, finding 5)."""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from adapters.persistence.migrate import upgrade_to_head
from application.ports.llm import LLMClient, ModelEvent, ModelRequest, ModelResponse, TextChunk
from bootstrap.container import Container, release
from bootstrap.settings import Settings
from domain.content import TextBlock
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.integration.test_agent_connections import Peer, prompt

pytestmark = pytest.mark.integration


class InstantLLM(LLMClient):
    """Answers at once: a cancel that is not seen before the turn starts is lost."""

    def has_credentials(self) -> bool:
        return True

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextChunk(text="done")
        yield ModelResponse(
            content=(TextBlock(text="done"),),
            stop=ModelStop.END_TURN,
            usage=Usage(input_tokens=1, output_tokens=1),
        )


@pytest.fixture
async def container(tmp_path: Path) -> AsyncIterator[Container]:
    settings = Settings(
        provider="demo",
        config_dir=tmp_path,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
    )
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    container.llm.override(providers.Object(InstantLLM()))
    yield container
    await release(container)


def _line(method: str, params: dict[str, Any], id: int | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return json.dumps(message)


async def _new(peer: Peer, cwd: Path) -> str:
    reply = await peer.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(reply["result"]["sessionId"])


async def _answer(peer: Peer, id: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30  # a backstop only
    while not (replies := [m for m in peer.sent if m.get("id") == id and "method" not in m]):
        assert loop.time() < deadline, peer.sent
        await asyncio.sleep(0.01)
    return replies[0]


async def test_finding_5_a_cancel_right_behind_its_prompt_cancels_it(
    container: Container, tmp_path: Path
) -> None:
    peer = Peer(container.agent())
    sid = await _new(peer, tmp_path)
    for id in (900, 901, 902):
        await peer.connection.receive(_line("session/prompt", prompt(sid), id))
        await peer.connection.receive(_line("session/cancel", {"sessionId": sid}))
        assert (await _answer(peer, id))["result"]["stopReason"] == "cancelled"
    # A cancel applies to prompts received before it only: the next one runs.
    assert (await peer.call("session/prompt", prompt(sid)))["result"]["stopReason"] == "end_turn"
    await peer.connection.close()


async def test_finding_5_a_close_right_behind_its_prompt_cancels_it_then_closes(
    container: Container, tmp_path: Path
) -> None:
    peer = Peer(container.agent())
    for id in (910, 920, 930):
        sid = await _new(peer, tmp_path)
        await peer.connection.receive(_line("session/prompt", prompt(sid), id))
        await peer.connection.receive(_line("session/close", {"sessionId": sid}, id + 1))
        assert (await _answer(peer, id))["result"]["stopReason"] == "cancelled"
        assert (await _answer(peer, id + 1))["result"] == {}
        answers = [m.get("id") for m in peer.sent if m.get("id") in (id, id + 1)]
        assert answers == [id, id + 1]  # the prompt's answer first, then the close's
        assert container.registry().find(sid) is None
    await peer.connection.close()
