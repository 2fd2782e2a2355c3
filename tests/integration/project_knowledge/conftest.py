"""LocalProjectKnowledge on a temp config directory, and a temp git repository."""

from datetime import date
from pathlib import Path

import pytest

from adapters.knowledge.local import LocalProjectKnowledge
from tests.integration.project_knowledge.support import init_repository


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def knowledge(config_dir: Path) -> LocalProjectKnowledge:
    return LocalProjectKnowledge(config_dir, today=lambda: date(2024, 2, 29))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repository(tmp_path / "outer" / "repo")
