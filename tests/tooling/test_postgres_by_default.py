"""Finding 8 of issue #42: `make test` skipped every PostgreSQL test unless
IAC_CODE_TEST_POSTGRES_URL was set, although every machine of this project runs a server on
127.0.0.1:5432. Now the local server is the default when it answers, the variable names
another, and a skip names the URL it tried and the variable."""

from collections.abc import Iterator

import pytest

from tests.support import postgres

LOCAL_ANSWERS = postgres._local_answers  # its cache, whatever a test puts in its place


@pytest.fixture(autouse=True)
def _unset(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(postgres.ENV, raising=False)
    LOCAL_ANSWERS.cache_clear()
    yield
    LOCAL_ANSWERS.cache_clear()


def test_finding_8_postgres_tests_use_the_local_server_when_it_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres, "_local_answers", lambda: True)
    assert postgres.server_url() == "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def test_finding_8_the_variable_still_names_another_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(postgres.ENV, "postgresql+asyncpg://someone@db.example:5433/other")
    assert postgres.server_url() == "postgresql+asyncpg://someone@db.example:5433/other"


def test_finding_8_a_skip_names_the_url_tried_and_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nowhere = "postgresql+asyncpg://postgres@127.0.0.1:1/test"  # port 1: nothing listens
    monkeypatch.setattr(postgres, "LOCAL", nowhere)
    with pytest.raises(pytest.skip.Exception) as skipped:
        postgres.server_url()
    assert nowhere in str(skipped.value)
    assert postgres.ENV in str(skipped.value)
