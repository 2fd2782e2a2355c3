"""A `session/cancel` whose `sessionId` is missing or not a string is the client's mistake:
one WARNING line, no traceback, as for any other malformed notification (issue 42,
finding 7). Notifications get no answer, so the log is all there is."""

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.persistence.migrate import upgrade_to_head
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
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    yield container
    await release(container)


@pytest.mark.parametrize(
    "params", [{"sessionId": 5}, {"sessionId": None}, {"sessionId": []}, {}, None]
)
async def test_finding_7_a_malformed_session_cancel_logs_one_warning_without_traceback(
    container: Container, caplog: pytest.LogCaptureFixture, params: Any
) -> None:
    peer = Peer(container.agent())
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "session/cancel"}
    if params is not None:
        message["params"] = params
    with caplog.at_level(logging.DEBUG):
        await peer.connection.receive(json.dumps(message))
        await peer.connection.close()  # waits for the notification's task
    told = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.levelname, r.exc_info) for r in told] == [("WARNING", None)], caplog.text
    assert "session/cancel" in told[0].getMessage()
    assert peer.sent == []  # a notification is never answered
