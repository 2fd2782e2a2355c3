from dataclasses import dataclass

import pytest

from application.runtime import SessionRegistry
from application.use_cases.lifecycle import CancelTurn, CloseSession
from application.use_cases.load_session import LoadSession, StoredSessions
from application.use_cases.new_session import NewSession
from application.use_cases.prompt import Prompt, TurnLimits
from application.use_cases.session_settings import SetConfigOption, SetMode
from application.use_cases.tool_phase import ToolPhase
from domain.config import DEFAULT_MODE, Catalog, Choice
from tests.fakes.ports import (
    FakeTools,
    FakeUnitOfWork,
    FixedClock,
    RecordingSink,
    ScriptedAsker,
    ScriptedLLM,
    SequentialIds,
)

CATALOG = Catalog(
    modes=(DEFAULT_MODE,), models=(Choice(value="m1", name="M1"), Choice(value="m2", name="M2"))
)


@dataclass
class World:
    uow: FakeUnitOfWork
    registry: SessionRegistry
    sink: RecordingSink
    clock: FixedClock
    ids: SequentialIds
    llm: ScriptedLLM
    tools: FakeTools
    asker: ScriptedAsker
    permission_timeout: float = 5.0

    def tool_phase(self) -> ToolPhase:
        return ToolPhase(
            uow=self.uow,
            runner=self.tools,
            asker=self.asker,
            sink=self.sink,
            clock=self.clock,
            permission_timeout=self.permission_timeout,
        )

    def new_session(self) -> NewSession:
        return NewSession(
            uow=self.uow,
            registry=self.registry,
            llm=self.llm,
            clock=self.clock,
            ids=self.ids,
            catalog=CATALOG,
            default_model="m1",
        )

    def prompt(self, max_turn_requests: int = 50) -> Prompt:
        return Prompt(
            uow=self.uow,
            registry=self.registry,
            llm=self.llm,
            sink=self.sink,
            clock=self.clock,
            ids=self.ids,
            limits=TurnLimits(max_turn_requests=max_turn_requests, max_tokens=1000),
            tools=self.tool_phase(),
        )

    def load(self) -> LoadSession:
        return LoadSession(stored=self.stored(), sink=self.sink, catalog=CATALOG)

    def stored(self) -> StoredSessions:
        return StoredSessions(uow=self.uow, registry=self.registry)

    def set_option(self) -> SetConfigOption:
        return SetConfigOption(
            uow=self.uow, registry=self.registry, clock=self.clock, catalog=CATALOG
        )

    def set_mode(self) -> SetMode:
        return SetMode(uow=self.uow, registry=self.registry, clock=self.clock, catalog=CATALOG)

    def cancel(self) -> CancelTurn:
        return CancelTurn(registry=self.registry)

    def close(self) -> CloseSession:
        return CloseSession(registry=self.registry)


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
