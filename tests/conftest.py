"""Suite-wide settings: hypothesis profiles for the fuzzing tests; a failure reported even
when pytest cannot format it; no process a test started outliving the session; the one
`workdir` fixture the end-to-end, HTTP and browser tests share."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import children
from tests.support.failure_reports import pytest_runtest_makereport  # noqa: F401  (a hook)

# The normal run is bounded and reproducible (the same examples every run, so a green suite
# stays green); `IAC_CODE_FUZZ=long` explores fresh random examples for much longer.
settings.register_profile(
    "default",
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "long",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("long" if os.environ.get("IAC_CODE_FUZZ") == "long" else "default")


def pytest_sessionfinish() -> None:
    """However the session ends (Ctrl-C included), no process a test started outlives it."""
    children.stop_leftovers()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty project directory a test's session works in (its `cwd`); a module that needs
    files in it before the server starts overrides this fixture."""
    path = tmp_path / "project"
    path.mkdir()
    return path
