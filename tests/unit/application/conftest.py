from dataclasses import dataclass

import pytest

from application.runtime import SessionRegistry
from application.use_cases.lifecycle import CancelTurn, CloseSession
from application.use_cases.load_session import LoadSession, StoredSessions
from application.use_cases.new_session import NewSession
from application.use_cases.prompt import Prompt, TurnLimits
from application.use_cases.session_settings import ChangeSettings, SetConfigOption, SetMode
from application.use_cases.tool_phase import ToolPhase
from domain.config import Catalog
from domain.models import ModelInfo
from domain.modes import offered_modes
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
    modes=offered_modes(allow_bypass=True),
    models=(ModelInfo(id="m1", name="M1"), ModelInfo(id="m2", name="M2", thinking=False)),
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
            catalog=CATALOG,
            settings=self.settings(),
        )

    def settings(self) -> ChangeSettings:
        return ChangeSettings(uow=self.uow, sink=self.sink, clock=self.clock, catalog=CATALOG)

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
            catalog=CATALOG,
        )

    def load(self) -> LoadSession:
        return LoadSession(stored=self.stored(), sink=self.sink, catalog=CATALOG)

    def stored(self) -> StoredSessions:
        return StoredSessions(uow=self.uow, registry=self.registry)

    def set_option(self) -> SetConfigOption:
        return SetConfigOption(registry=self.registry, settings=self.settings())

    def set_mode(self) -> SetMode:
        return SetMode(registry=self.registry, settings=self.settings())

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
