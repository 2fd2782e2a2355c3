"""The agent's own `initialize` route (HTTP and WebSocket use it; stdio answers it early with
the same function) reads protocolVersion as the schema types it (issue 25, finding 7)."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bootstrap.container import Container, release
from bootstrap.settings import Settings
from tests.integration.test_agent_connections import Peer

pytestmark = pytest.mark.integration


@pytest.fixture
async def container(tmp_path: Path) -> AsyncIterator[Container]:
    settings = Settings(
        provider="demo",
        config_dir=tmp_path,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
    )
    container = Container(settings=settings, version="test")
    yield container
    await release(container)


@pytest.mark.parametrize("version", ["abc", {}, -5, 1.5, True, 70000, None, "2025-01-01"])
async def test_finding_7_a_protocol_version_not_a_uint16_is_invalid_params(
    container: Container, version: Any
) -> None:
    peer = Peer(container.agent())
    reply = await peer.call("initialize", {"protocolVersion": version})
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["data"]["field"] == "protocolVersion"
    await peer.connection.close()


@pytest.mark.parametrize("version", [0, 1, 2, 65535])
async def test_finding_7_any_valid_version_is_answered_with_ours(
    container: Container, version: int
) -> None:
    peer = Peer(container.agent())
    reply = await peer.call("initialize", {"protocolVersion": version})
    assert reply["result"]["protocolVersion"] == 1
    await peer.connection.close()
