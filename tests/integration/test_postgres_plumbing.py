"""How the tests find PostgreSQL: unset and no local server answering, its tests are
skipped saying how to run them; set but unreachable, they fail (never skip); reachable,
each run gets a database of its own."""

import pytest

from tests.http.walkthrough import free_port
from tests.support import postgres
from tests.support.postgres import ENV, PostgresUnreachable, scratch_database

pytestmark = pytest.mark.integration


def test_without_a_server_the_tests_are_skipped_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unset, and no server answers where the local one would (port 1: nothing listens)."""
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(postgres, "LOCAL", "postgresql+asyncpg://postgres@127.0.0.1:1/test")
    postgres._local_answers.cache_clear()  # asked again, of the address nobody serves
    try:
        with pytest.raises(pytest.skip.Exception, match=f"set {ENV}"), scratch_database():
            pass
    finally:
        postgres._local_answers.cache_clear()  # the next test asks the real one again


def test_an_unreachable_server_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/test")
    with pytest.raises(PostgresUnreachable, match="unreachable"), scratch_database():
        pass
