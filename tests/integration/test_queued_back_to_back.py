"""A client that queues its prompts never has one refused busy (issue 42, finding 6): two
prompts read back to back, or a prompt, a steering message and a prompt, are taken in the
order they were read. The session is kept for a prompt as it is read, so the one behind
it waits in the queue, whichever of their tasks reaches its turn first."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from adapters.acp_v1.methods import STEER_METHOD
from adapters.persistence.migrate import upgrade_to_head
from bootstrap.container import Container, release
from bootstrap.settings import Settings
from tests.integration.test_agent_connections import GatedLLM, Peer, prompt

pytestmark = pytest.mark.integration

BACKSTOP = 30.0  # never reached when all is well
QUEUEING = {"_meta": {"iac_code": {"promptQueueing": True}}}


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Container, GatedLLM]]:
    settings = Settings(
        provider="demo",
        config_dir=tmp_path,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
    )
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    llm = GatedLLM()
    container.llm.override(providers.Object(llm))
    yield container, llm
    await release(container)


async def _queueing_peer(container: Container, cwd: Path) -> tuple[Peer, str]:
    peer = Peer(container.agent())
    await peer.call("initialize", {"protocolVersion": 1, "clientCapabilities": QUEUEING})
    new = await peer.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    return peer, new["result"]["sessionId"]


async def _answers(*replies: "asyncio.Future[dict[str, Any]]") -> list[Any]:
    done = await asyncio.wait_for(asyncio.gather(*replies), BACKSTOP)
    return [reply.get("result", reply.get("error")) for reply in done]


def _stops(answers: list[Any]) -> list[Any]:
    """Each prompt's stop reason, or its error."""
    return [a.get("stopReason", a) for a in answers]


async def test_finding_6_two_prompts_read_back_to_back_the_second_is_queued(
    world: tuple[Container, GatedLLM], tmp_path: Path
) -> None:
    container, llm = world
    peer, sid = await _queueing_peer(container, tmp_path)
    first = await peer.start("session/prompt", prompt(sid, "first"))
    second = await peer.start("session/prompt", prompt(sid, "second"))
    await asyncio.wait_for(llm.streaming.wait(), BACKSTOP)
    assert not second.done()  # it waits behind the first, not refused
    llm.gate.set()
    assert _stops(await _answers(first, second)) == ["end_turn", "end_turn"]
    await peer.connection.close()


async def test_finding_6_a_prompt_a_steer_and_a_prompt_back_to_back_none_is_refused(
    world: tuple[Container, GatedLLM], tmp_path: Path
) -> None:
    container, llm = world
    peer, sid = await _queueing_peer(container, tmp_path)
    first = await peer.start("session/prompt", prompt(sid, "first"))
    steer = await peer.start(STEER_METHOD, prompt(sid, "also this"))
    second = await peer.start("session/prompt", prompt(sid, "second"))
    await asyncio.wait_for(llm.streaming.wait(), BACKSTOP)
    llm.gate.set()
    assert _stops(await _answers(first, second)) == ["end_turn", "end_turn"]
    steered = (await _answers(steer))[0]
    assert steered.get("outcome") in ("injected", "started_new_turn"), steered
    await peer.connection.close()
