"""The compaction tests' world: a small context window and an early compaction threshold."""

import pytest

from application.compaction.context_meter import CompactionPolicy
from tests.unit.application.compaction.support import SMALL
from tests.unit.application.world import World


@pytest.fixture
def small(world: World) -> World:
    world.catalog = SMALL
    world.policy = CompactionPolicy(compact_at=0.5, keep_turns=2)
    return world
