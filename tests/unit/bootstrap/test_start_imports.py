"""The agent's start imports give way to the connection opened ahead for the first
`session/list` on PostgreSQL: they wait until it has settled, but never without a bound,
and not at all where nothing is opened ahead (bootstrap/heavy_imports.py, bootstrap/early.py)."""

import threading

import pytest

from bootstrap import heavy_imports
from bootstrap.early import early_answers
from bootstrap.heavy_imports import GIVE_WAY_SECONDS, import_start_modules


@pytest.fixture
def imported(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What import_start_modules imports, in order (recorded, not imported)."""
    done: list[str] = []
    monkeypatch.setattr(
        heavy_imports, "import_early_modules", lambda url, **_: done.append("early")
    )
    monkeypatch.setattr(
        heavy_imports, "import_heavy_modules", lambda *, web_hooks: done.append("heavy")
    )
    return done


class Opening:
    """An injected opening: records the bound it is waited for with, and what had been
    imported by then."""

    def __init__(self, imported: list[str]) -> None:
        self._imported = imported
        self.waits: list[tuple[float | None, list[str]]] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append((timeout, list(self._imported)))
        return True


def test_the_imports_wait_for_the_connection_opened_ahead(imported: list[str]) -> None:
    opening = Opening(imported)
    import_start_modules("postgresql+asyncpg://h/db", web_hooks=False, opened_ahead=opening)
    assert opening.waits == [(GIVE_WAY_SECONDS, [])]  # once, bounded, before any import
    assert imported == ["early", "heavy"]


def test_the_wait_is_bounded_when_the_opening_never_settles(imported: list[str]) -> None:
    never = threading.Event()  # nothing sets it: an opening that hangs
    import_start_modules(
        "postgresql+asyncpg://h/db", web_hooks=False, opened_ahead=never, patience=0
    )
    assert imported == ["early", "heavy"]
    assert 0 < GIVE_WAY_SECONDS <= 0.15  # the agent is never held back long


def test_nothing_opened_ahead_is_not_waited_for(imported: list[str]) -> None:
    import_start_modules("sqlite+aiosqlite:///s.db", web_hooks=True, opened_ahead=None)
    assert imported == ["early", "heavy"]


async def test_on_sqlite_nothing_is_opened_ahead_so_the_agent_waits_for_nothing() -> None:
    early = early_answers("sqlite+aiosqlite:///s.db")
    assert early.settled.is_set()
    assert set(early.answers) == {"session/list", "sessions/list"}


def test_without_a_running_loop_nothing_is_opened_ahead() -> None:
    assert early_answers("postgresql+asyncpg://postgres@127.0.0.1:9/x").settled.is_set()
