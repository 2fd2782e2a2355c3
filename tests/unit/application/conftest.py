import asyncio
from dataclasses import dataclass, field

import pytest

from application.commands import CommandRegistry
from application.runtime import SessionRegistry
from application.use_cases.announce import AnnounceSession
from application.use_cases.ask_user import AskUser
from application.use_cases.background_tasks import BackgroundTasks
from application.use_cases.briefing import Briefer
from application.use_cases.commands.context import ClearCommand, CompactCommand
from application.use_cases.commands.dispatch import BuiltInCommands
from application.use_cases.commands.info import HelpCommand, UsageCommand
from application.use_cases.commands.run import RunCommand
from application.use_cases.commands.settings import ModeCommand, ModelCommand, RenameCommand
from application.use_cases.compaction import Compactor
from application.use_cases.context_meter import CompactionPolicy, ContextMeter
from application.use_cases.context_room import ContextRoom
from application.use_cases.lifecycle import CancelTurn, CloseSession
from application.use_cases.load_session import LoadSession, StoredSessions
from application.use_cases.model_request import RequestBuilder, TurnLimits
from application.use_cases.model_turn import ModelTurn
from application.use_cases.new_session import NewSession
from application.use_cases.permission_desk import PermissionDesk
from application.use_cases.plan_exit import PlanExit
from application.use_cases.prompt import Prompt
from application.use_cases.prompt_preparation import PromptPreparation
from application.use_cases.provider_retry import ProviderRetry, RetryTerms, Sleep
from application.use_cases.reply_stream import ReplyStream
from application.use_cases.session_log import SessionLog
from application.use_cases.session_opening import OpenWith
from application.use_cases.session_servers import SessionServers
from application.use_cases.session_settings import ChangeSettings, SetConfigOption, SetMode
from application.use_cases.sessions import ForkSession, RenameSession, ResumeSession
from application.use_cases.shared_knowledge import SharedKnowledge
from application.use_cases.tool_call_log import ToolCallLog
from application.use_cases.tool_catalogue import ToolCatalogue
from application.use_cases.tool_execution import ToolExecution
from application.use_cases.tool_permissions import PermissionFlow
from application.use_cases.tool_phase import DEFAULT_MAX_SUBAGENTS, ToolPhase
from application.use_cases.turn_lease import LeaseTerms, TurnLeasing
from application.use_cases.turn_ownership import TurnOwnership
from application.use_cases.turn_parts import ModelSide, TurnOutput
from domain.config import Catalog
from domain.models import ModelInfo
from domain.modes import offered_modes
from tests.fakes.elicitation import FakeElicitor
from tests.fakes.knowledge import FakeKnowledge
from tests.fakes.ports import (
    FakeMcpConnector,
    FakePresence,
    FakeTools,
    FakeUnitOfWork,
    FixedClock,
    InMemoryTurnLeases,
    RecordingSink,
    ScriptedAsker,
    ScriptedLLM,
    SequentialIds,
    StoppedClock,
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
    catalog: Catalog = CATALOG
    policy: CompactionPolicy = field(default_factory=CompactionPolicy)
    max_turn_requests: int = 50
    connector: FakeMcpConnector = field(default_factory=FakeMcpConnector)
    knowledge: FakeKnowledge = field(default_factory=FakeKnowledge)
    # The project's knowledge (instructions, skills, environment) is told to the model only
    # in a briefed world: the rest of the tests read requests without it.
    briefed: bool = False
    shared: SharedKnowledge = field(default_factory=SharedKnowledge)  # as the one Briefer has
    # Turn leases, as when several processes share the store (see `leased`); None: one.
    leases: InMemoryTurnLeases | None = None
    lease_terms: LeaseTerms = field(default_factory=lambda: LeaseTerms(holder="here"))
    lease_clock: StoppedClock = field(default_factory=StoppedClock)  # the leases' time
    presence: FakePresence = field(default_factory=FakePresence)
    # The turn's provider retries (None: each request asked once) and the sleep its waits
    # take (a test's own, that need not pass any time).
    retry_terms: RetryTerms | None = None
    sleep: Sleep | None = None
    # Questions for the user (ask_user, MCP elicitation); None: the client shows none.
    elicitor: FakeElicitor | None = None
    tasks: BackgroundTasks | None = None  # background tasks, where a test runs them

    def tool_phase(self, max_subagents: int = DEFAULT_MAX_SUBAGENTS) -> ToolPhase:
        catalogue, calls = self.tool_catalogue(), self.tool_calls()
        desk = PermissionDesk(
            asker=self.asker, uow=self.uow, clock=self.clock, timeout=self.permission_timeout
        )
        return ToolPhase(
            catalogue=catalogue,
            calls=calls,
            permissions=PermissionFlow(
                desk=desk, catalogue=catalogue, clock=self.clock, sink=self.sink
            ),
            plan_exit=PlanExit(
                desk=desk, settings=self.settings(), catalogue=catalogue, calls=calls
            ),
            execution=ToolExecution(
                catalogue=catalogue,
                calls=calls,
                registry=self.registry,
                briefer=self.briefer(),
                ask_user=self.ask_user(calls),
                tasks=self.tasks,
            ),
            max_subagents=max_subagents,
        )

    def tool_catalogue(self) -> ToolCatalogue:
        return ToolCatalogue(
            runner=self.tools,
            catalog=self.catalog,
            registry=self.registry,
            knowledge=self.knowledge if self.briefed else None,
            elicitor=self.elicitor,
        )

    def ask_user(self, calls: ToolCallLog) -> AskUser | None:
        if self.elicitor is None:
            return None
        return AskUser(elicitor=self.elicitor, calls=calls, timeout=self.permission_timeout)

    def tool_calls(self) -> ToolCallLog:
        return ToolCallLog(sink=self.sink, uow=self.uow)

    def briefer(self) -> Briefer | None:
        return Briefer(knowledge=self.knowledge, shared=self.shared) if self.briefed else None

    def settings(self) -> ChangeSettings:
        return ChangeSettings(uow=self.uow, sink=self.sink, clock=self.clock, catalog=self.catalog)

    def new_session(self) -> NewSession:
        return NewSession(
            uow=self.uow,
            registry=self.registry,
            llm=self.llm,
            clock=self.clock,
            ids=self.ids,
            catalog=self.catalog,
            open_with=self.open_with(),
            default_model="m1",
        )

    def fork(self) -> ForkSession:
        return ForkSession(
            uow=self.uow,
            stored=self.stored(),
            registry=self.registry,
            ids=self.ids,
            clock=self.clock,
            catalog=self.catalog,
            open_with=self.open_with(),
        )

    def resume(self) -> ResumeSession:
        return ResumeSession(stored=self.stored(), catalog=self.catalog, open_with=self.open_with())

    def open_with(self) -> OpenWith:
        return OpenWith(uow=self.uow, registry=self.registry)

    async def connector_now(self) -> FakeMcpConnector:
        return self.connector

    def servers(self) -> SessionServers:
        return SessionServers(
            connector=self.connector_now,
            commands=self.commands(),
            sink=self.sink,
            ids=self.ids,
            project_commands=briefer.offered if (briefer := self.briefer()) else None,
            elicitor=self.elicitor,
            elicitation_timeout=self.permission_timeout,
        )

    # The prompt's graph, wired as bootstrap/containers/ wires it.
    def requests(self) -> RequestBuilder:
        limits = TurnLimits(max_turn_requests=self.max_turn_requests, max_tokens=1000)
        return RequestBuilder(
            catalog=self.catalog, tools=self.tool_catalogue(), limits=limits, registry=self.registry
        )

    def log(self) -> SessionLog:
        return SessionLog(uow=self.uow, sink=self.sink)

    def meter(self) -> ContextMeter:
        return ContextMeter(catalog=self.catalog, policy=self.policy)

    def compactor(self) -> Compactor:
        return Compactor(
            llm=self.llm,
            log=self.log(),
            sink=self.sink,
            clock=self.clock,
            ids=self.ids,
            meter=self.meter(),
        )

    def commands(self) -> CommandRegistry:
        meter, requests = self.meter(), self.requests()
        rename = RenameSession(
            uow=self.uow,
            stored=self.stored(),
            registry=self.registry,
            sink=self.sink,
            clock=self.clock,
        )
        return CommandRegistry(
            [
                lambda: CompactCommand(compactor=self.compactor(), meter=meter, requests=requests),
                lambda: ClearCommand(
                    log=self.log(), sink=self.sink, clock=self.clock, meter=meter, requests=requests
                ),
                lambda: RenameCommand(rename=rename),
                lambda: ModelCommand(settings=self.settings(), catalog=self.catalog),
                lambda: ModeCommand(settings=self.settings(), catalog=self.catalog),
                lambda: UsageCommand(meter=meter, requests=requests, sink=self.sink),
                HelpCommand,
            ]
        )

    def prompt(self, max_turn_requests: int | None = None) -> Prompt:
        if max_turn_requests is not None:
            self.max_turn_requests = max_turn_requests
        commands, servers, output = self.commands(), self.servers(), self.output()
        model = ModelSide(llm=self.llm, requests=self.requests(), meter=self.meter())
        runner = RunCommand(
            registry=commands, log=self.log(), sink=self.sink, clock=self.clock, ids=self.ids
        )
        return Prompt(
            registry=self.registry,
            commands=BuiltInCommands(registry=commands, runner=runner, servers=servers),
            preparation=PromptPreparation(
                commands=commands, output=output, servers=servers, briefer=self.briefer()
            ),
            turn=ModelTurn(
                model=model,
                output=output,
                tools=self.tool_phase(),
                room=ContextRoom(model=model, compactor=self.compactor(), output=output),
                replies=ReplyStream(
                    model=model, output=output, calls=self.tool_calls(), retry=self.retry()
                ),
            ),
            ownership=self.ownership(),
        )

    def retry(self) -> ProviderRetry | None:
        if self.retry_terms is None:
            return None
        return ProviderRetry(
            terms=self.retry_terms,
            sink=self.sink,
            clock=self.clock,
            ids=self.ids,
            sleep=self.sleep or asyncio.sleep,
        )

    def output(self) -> TurnOutput:
        return TurnOutput(log=self.log(), sink=self.sink, clock=self.clock, ids=self.ids)

    def leasing(self) -> TurnLeasing | None:
        if self.leases is None:
            return None
        return TurnLeasing(
            leases=self.leases,
            clock=self.lease_clock,
            terms=self.lease_terms,
            presence=self.presence,
        )

    def ownership(self) -> TurnOwnership | None:
        leasing = self.leasing()
        return None if leasing is None else TurnOwnership(leasing=leasing, stored=self.stored())

    def announce(self) -> AnnounceSession:
        return AnnounceSession(
            sessions=self.registry,
            commands=self.commands(),
            sink=self.sink,
            meter=self.meter(),
            requests=self.requests(),
            servers=self.servers(),
            briefer=self.briefer(),
            catalog=self.catalog,
        )

    def load(self) -> LoadSession:
        return LoadSession(
            stored=self.stored(), sink=self.sink, catalog=self.catalog, open_with=self.open_with()
        )

    def stored(self) -> StoredSessions:
        return StoredSessions(uow=self.uow, registry=self.registry, leasing=self.leasing())

    def set_option(self) -> SetConfigOption:
        return SetConfigOption(registry=self.registry, settings=self.settings())

    def set_mode(self) -> SetMode:
        return SetMode(registry=self.registry, settings=self.settings())

    def cancel(self) -> CancelTurn:
        return CancelTurn(registry=self.registry, leasing=self.leasing())

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
