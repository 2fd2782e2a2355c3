"""The world of the use-case tests: the application's use cases wired to in-memory fakes."""

import asyncio
from dataclasses import dataclass, field

from application.agent_loop.context_room import ContextRoom
from application.agent_loop.model_request import RequestBuilder, TurnLimits
from application.agent_loop.model_turn import ModelTurn
from application.agent_loop.parts import ModelSide, TurnOutput
from application.agent_loop.provider_retry import ProviderRetry, RetryTerms, Sleep
from application.agent_loop.reply_stream import ReplyStream
from application.agent_loop.system_prompts import SessionPrompt
from application.checkpoints.file_checkpoints import FileCheckpoints
from application.commands.context import ClearCommand, CompactCommand
from application.commands.dispatch import BuiltInCommands
from application.commands.info import HelpCommand, UsageCommand
from application.commands.run import RunCommand
from application.commands.settings import ModeCommand, ModelCommand, RenameCommand
from application.compaction.compactor import Compactor
from application.compaction.context_meter import CompactionPolicy, ContextMeter
from application.history.session_log import SessionLog
from application.knowledge.briefing import Briefer
from application.knowledge.shared import SharedKnowledge
from application.mcp.session_servers import SessionServers
from application.notices.session_notices import SessionNotices
from application.ports.tracing import NO_TRACING
from application.runtime.command_registry import CommandRegistry
from application.runtime.registry import SessionRegistry
from application.runtime.subagent_runs import SubagentRuns
from application.sessions.delete import DeleteSession
from application.sessions.fork import ForkSession
from application.sessions.lifecycle import CancelTurn, CloseSession
from application.sessions.load_session import LoadSession, StoredSessions
from application.sessions.new_session import Fresh, ModelAccess, NewSession
from application.sessions.opening import OpenWith
from application.sessions.rename import RenameSession
from application.sessions.resume import ResumeSession
from application.sessions.settings import ChangeSettings, SetConfigOption, SetMode
from application.sessions.turn_lease import LeaseTerms, TurnLeasing
from application.tasks.background_tasks import BackgroundTasks
from application.tools.ask_user import AskUser
from application.tools.call_log import ToolCallLog
from application.tools.call_watch import SessionWatch
from application.tools.catalogue import ToolCatalogue
from application.tools.execution import ToolExecution
from application.tools.gate import SessionGate
from application.tools.own_tools import SessionOwnTools
from application.tools.permission_desk import PermissionDesk
from application.tools.permissions import PermissionFlow
from application.tools.phase import DEFAULT_MAX_SUBAGENTS, ToolPhase
from application.tools.plan_exit import PlanExit
from application.tools.sandbox_waivers import SandboxWaivers
from application.turn.announce import AnnounceSession
from application.turn.ownership import TurnOwnership
from application.turn.preparation import PromptPreparation
from application.turn.prompt import Prompt
from domain.config import Catalog
from domain.models import ModelInfo
from domain.modes import offered_modes
from domain.worktree import Isolation
from tests.fakes.briefing import UnbriefedBriefer
from tests.fakes.elicitation import FakeElicitor
from tests.fakes.knowledge import FakeKnowledge
from tests.fakes.leases import FakePresence, InMemoryTurnLeases
from tests.fakes.mcp import FakeMcpConnector
from tests.fakes.time_and_ids import FixedClock, SequentialIds, StoppedClock
from tests.fakes.turn import FakeTools, RecordingSink, ScriptedAsker, ScriptedLLM
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.fakes.workspace import FakeWorkspaces
from tests.fakes.workspace_files import InMemoryWorkspaceFiles, ScriptedScanner
from tests.fakes.worktrees import FakeWorktrees

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
    # The turn's provider retries (by default each request is asked once) and the sleep
    # its waits take (a test's own, that need not pass any time).
    retry_terms: RetryTerms = field(default_factory=lambda: RetryTerms(max_retries=0))
    sleep: Sleep | None = None
    # Questions for the user (ask_user, MCP elicitation); by default the client shows none.
    elicitor: FakeElicitor = field(default_factory=lambda: FakeElicitor(modes=set()))
    workspaces: FakeWorkspaces = field(default_factory=FakeWorkspaces)
    files: InMemoryWorkspaceFiles = field(default_factory=InMemoryWorkspaceFiles)  # checkpoints'
    tasks: BackgroundTasks = field(init=False)  # background tasks, where a test runs them
    children: SubagentRuns = field(default_factory=SubagentRuns)  # sub-agents running here
    waivers: SandboxWaivers = field(default_factory=SandboxWaivers)  # calls let out once
    worktrees: FakeWorktrees = field(default_factory=FakeWorktrees)
    isolation: Isolation = Isolation.NONE  # the server's default for new sessions

    def __post_init__(self) -> None:
        notices = SessionNotices(sink=self.sink, ids=self.ids)
        self.tasks = BackgroundTasks(
            sink=self.sink, uow=self.uow, clock=self.clock, notices=notices, registry=self.registry
        )

    def tool_phase(self, max_subagents: int = DEFAULT_MAX_SUBAGENTS) -> ToolPhase:
        catalogue, calls = self.tool_catalogue(), self.tool_calls()
        desk = PermissionDesk(
            asker=self.asker, uow=self.uow, clock=self.clock, timeout=self.permission_timeout
        )
        permissions = PermissionFlow(
            desk=desk, catalog=self.catalog, clock=self.clock, sink=self.sink, waivers=self.waivers
        )
        plan_exit = PlanExit(desk=desk, settings=self.settings(), catalog=self.catalog, calls=calls)
        return ToolPhase(
            tools=catalogue,
            calls=calls,
            gate=SessionGate(permissions=permissions, plan_exit=plan_exit, calls=calls),
            execution=ToolExecution(
                tools=catalogue,
                calls=calls,
                own=SessionOwnTools(
                    catalog=self.catalog,
                    waivers=self.waivers,
                    calls=calls,
                    ask_user=self.ask_user(calls),
                    tasks=self.tasks,
                    workspaces=self.workspaces,
                ),
                watch=SessionWatch(
                    checkpoints=self.checkpoints(),
                    registry=self.registry,
                    briefer=Briefer(knowledge=self.knowledge, shared=self.shared),
                ),
            ),
            tracer=NO_TRACING,
            max_subagents=max_subagents,
        )

    def tool_catalogue(self) -> ToolCatalogue:
        return ToolCatalogue(
            runner=self.tools,
            catalog=self.catalog,
            registry=self.registry,
            workspaces=self.workspaces,
            knowledge=self.knowledge,
            elicitor=self.elicitor,
            sink=self.sink,
            waivers=self.waivers,
        )

    def ask_user(self, calls: ToolCallLog) -> AskUser:
        return AskUser(elicitor=self.elicitor, calls=calls, timeout=self.permission_timeout)

    def checkpoints(self) -> FileCheckpoints:
        notices = SessionNotices(sink=self.sink, ids=self.ids)
        return FileCheckpoints(
            uow=self.uow,
            files=self.files,
            notices=notices,
            max_bytes=1 << 20,
            scanner=ScriptedScanner(),
        )

    def tool_calls(self) -> ToolCallLog:
        return ToolCallLog(sink=self.sink, uow=self.uow)

    def briefer(self) -> Briefer:
        if not self.briefed:
            return UnbriefedBriefer()
        return Briefer(knowledge=self.knowledge, shared=self.shared)

    def settings(self) -> ChangeSettings:
        return ChangeSettings(uow=self.uow, sink=self.sink, clock=self.clock, catalog=self.catalog)

    def new_session(self) -> NewSession:
        fresh = Fresh(ids=self.ids, clock=self.clock, catalog=self.catalog, default_model="m1")
        return NewSession(
            uow=self.uow,
            registry=self.registry,
            open_with=self.open_with(),
            fresh=fresh,
            access=ModelAccess(llm=self.llm),
            worktrees=self.worktrees,
            isolation=self.isolation,
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
            worktrees=self.worktrees,
        )

    def delete(self) -> DeleteSession:
        return DeleteSession(
            uow=self.uow,
            registry=self.registry,
            clock=self.clock,
            tasks=self.background_tasks(),
            worktrees=self.worktrees,
        )

    def resume(self) -> ResumeSession:
        return ResumeSession(stored=self.stored(), catalog=self.catalog, open_with=self.open_with())

    def open_with(self) -> OpenWith:
        return OpenWith(uow=self.uow, registry=self.registry)

    async def connector_now(self) -> FakeMcpConnector:
        return self.connector

    def servers(self, commands: CommandRegistry | None = None) -> SessionServers:
        return SessionServers(
            connector=self.connector_now,
            commands=commands or self.commands(),
            sink=self.sink,
            ids=self.ids,
            project_commands=self.briefer().offered,
            elicitor=self.elicitor,
            elicitation_timeout=self.permission_timeout,
        )

    # The prompt's graph, wired as bootstrap/containers/ wires it.
    def requests(self) -> RequestBuilder:
        limits = TurnLimits(max_turn_requests=self.max_turn_requests, max_tokens=1000)
        return RequestBuilder(
            catalog=self.catalog,
            tools=self.tool_catalogue(),
            limits=limits,
            prompt=SessionPrompt(catalog=self.catalog, registry=self.registry),
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
                commands=commands,
                output=output,
                servers=servers,
                briefer=self.briefer(),
                tasks=self.background_tasks(),
                clock=self.clock,
            ),
            turn=ModelTurn(
                model=model,
                output=output,
                tools=self.tool_phase(),
                room=ContextRoom(model=model, compactor=self.compactor(), output=output),
                replies=ReplyStream(
                    model=model,
                    output=output,
                    calls=self.tool_calls(),
                    tracer=NO_TRACING,
                    retry=self.retry(),
                ),
            ),
            ownership=self.ownership(),
        )

    def retry(self) -> ProviderRetry:
        return ProviderRetry(
            terms=self.retry_terms,
            sink=self.sink,
            clock=self.clock,
            ids=self.ids,
            sleep=self.sleep or asyncio.sleep,
        )

    def output(self) -> TurnOutput:
        return TurnOutput(log=self.log(), sink=self.sink, clock=self.clock, ids=self.ids)

    def leasing(self) -> TurnLeasing:
        if self.leases is None:  # the store's only process: its leases are never contended
            self.leases = InMemoryTurnLeases(self.uow.sessions)
        return TurnLeasing(
            leases=self.leases,
            clock=self.lease_clock,
            terms=self.lease_terms,
            presence=self.presence,
        )

    def ownership(self) -> TurnOwnership:
        return TurnOwnership(leasing=self.leasing(), stored=self.stored())

    def announce(self) -> AnnounceSession:
        return AnnounceSession(
            sessions=self.registry,
            sink=self.sink,
            model=self.model_side(),
            servers=self.servers(),
            briefer=self.briefer(),
            catalog=self.catalog,
            tasks=self.background_tasks(),
        )

    def model_side(self) -> ModelSide:
        return ModelSide(llm=self.llm, requests=self.requests(), meter=self.meter())

    def background_tasks(self) -> BackgroundTasks:
        return self.tasks

    def load(self) -> LoadSession:
        return LoadSession(
            stored=self.stored(),
            sink=self.sink,
            catalog=self.catalog,
            open_with=self.open_with(),
            tasks=self.background_tasks(),
        )

    def stored(self) -> StoredSessions:
        return StoredSessions(uow=self.uow, registry=self.registry, leasing=self.leasing())

    def set_option(self) -> SetConfigOption:
        return SetConfigOption(registry=self.registry, settings=self.settings())

    def set_mode(self) -> SetMode:
        return SetMode(registry=self.registry, settings=self.settings())

    def cancel(self) -> CancelTurn:
        return CancelTurn(registry=self.registry, leasing=self.leasing(), children=self.children)

    def close(self) -> CloseSession:
        return CloseSession(registry=self.registry, tasks=self.background_tasks())
