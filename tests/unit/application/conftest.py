"""The use-case tests' world as fixtures: plain, briefed on the project, or holding leases."""

import pytest

from application.runtime.registry import SessionRegistry
from application.sessions.turn_lease import LeaseTerms
from tests.fakes.leases import InMemoryTurnLeases
from tests.fakes.time_and_ids import FixedClock, SequentialIds
from tests.fakes.turn import FakeTools, RecordingSink, ScriptedAsker, ScriptedLLM
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.unit.application.world import World


@pytest.fixture
def world() -> World:
    return World(
        uow=FakeUnitOfWork(),
        registry=SessionRegistry(),
        sink=RecordingSink(),
        clock=FixedClock(),
        ids=SequentialIds(),
        llm=ScriptedLLM(),
        tools=FakeTools(),
        asker=ScriptedAsker(),
    )


@pytest.fixture
def briefed(world: World) -> World:
    """A world whose model is told the project's knowledge (see FakeKnowledge)."""
    world.briefed = True
    return world


@pytest.fixture
def leased(world: World) -> World:
    """A world whose turns hold leases, as when other processes share its store."""
    world.leases = InMemoryTurnLeases(world.uow.sessions)
    world.lease_terms = LeaseTerms(holder="here", seconds=30, poll=0.01)
    return world
