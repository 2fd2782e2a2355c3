"""The room for the shared session on fake sessions and manual timers."""

import pytest

from application.attachments.room import Attachments
from tests.fakes.clients import FakeSessions, ManualTimers


@pytest.fixture
def sessions() -> FakeSessions:
    return FakeSessions()


@pytest.fixture
def timers() -> ManualTimers:
    return ManualTimers()


@pytest.fixture
def room(sessions: FakeSessions, timers: ManualTimers) -> Attachments:
    return Attachments(
        close=sessions.close, busy=sessions.busy, detached_timeout=42.0, schedule=timers
    )
