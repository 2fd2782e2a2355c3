"""The single composition root. Importing it loads the heavy modules: keep it off the
path to the `initialize` answer (see bootstrap/stdio.py)."""

import asyncio
import logging
import operator
from collections.abc import Callable

from dependency_injector import containers, providers
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.clock import SystemClock
from adapters.ids import UuidIds
from adapters.knowledge.local import LocalProjectKnowledge
from adapters.persistence.engine import backend, make_engine
from adapters.persistence.journal_store import (
    SqlAlchemyConnectionRecords,
    SqlAlchemyUpdateJournalStore,
)
from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.sqlite import read_only  # an execution option: PostgreSQL ignores it
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from adapters.presence import LockFilePresence
from adapters.protocol.agent import AcpAgent
from adapters.protocol.channels import SessionChannels
from adapters.protocol.journal import JournalTerms, UpdateJournal
from adapters.protocol.permissions import AcpPermissionAsker
from adapters.protocol.revival import ConnectionRevival
from adapters.protocol.use_cases import UseCases
from adapters.tools.base import Limits
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.client import AcpWorkspaces
from adapters.workspace.local import LocalWorkspace
from application.attachments.room import Attachments
from application.attachments.turn_state import TurnStates, held_elsewhere
from application.commands import Command, CommandRegistry
from application.ports.mcp import McpConnector
from application.runtime import SessionRegistry
from application.use_cases.announce import AnnounceSession
from application.use_cases.briefing import Briefer
from application.use_cases.commands.context import ClearCommand, CompactCommand
from application.use_cases.commands.dispatch import BuiltInCommands
from application.use_cases.commands.info import HelpCommand, UsageCommand
from application.use_cases.commands.memory import MemoryCommand
from application.use_cases.commands.run import RunCommand
from application.use_cases.commands.settings import ModeCommand, ModelCommand, RenameCommand
from application.use_cases.compaction import Compactor
from application.use_cases.context_meter import CompactionPolicy, ContextMeter
from application.use_cases.context_room import ContextRoom
from application.use_cases.lifecycle import CancelTurn, CloseSession
from application.use_cases.listing import ListSessions
from application.use_cases.load_session import LoadSession, StoredSessions
from application.use_cases.model_request import RequestBuilder, TurnLimits
from application.use_cases.model_turn import ModelTurn
from application.use_cases.new_session import NewSession
from application.use_cases.permission_desk import PermissionDesk
from application.use_cases.plan_exit import PlanExit
from application.use_cases.prompt import Prompt
from application.use_cases.prompt_preparation import PromptPreparation
from application.use_cases.reply_stream import ReplyStream
from application.use_cases.session_log import SessionLog
from application.use_cases.session_opening import OpenWith
from application.use_cases.session_servers import SessionServers
from application.use_cases.session_settings import ChangeSettings, SetConfigOption, SetMode
from application.use_cases.sessions import (
    DeleteSession,
    ForkSession,
    RenameSession,
    ResumeSession,
)
from application.use_cases.subagent import SubAgentTools
from application.use_cases.tool_call_log import ToolCallLog
from application.use_cases.tool_catalogue import ToolCatalogue
from application.use_cases.tool_execution import ToolExecution
from application.use_cases.tool_permissions import PermissionFlow
from application.use_cases.tool_phase import ToolPhase
from application.use_cases.turn_lease import LeaseTerms, TurnLeasing
from application.use_cases.turn_ownership import TurnOwnership
from application.use_cases.turn_parts import ModelSide, TurnOutput
from bootstrap.model_clients import build_llm, make_initialize, offered
from bootstrap.settings import Settings
from bootstrap.tracing import make_tracer
from domain.config import Catalog
from domain.modes import offered_modes


def build_catalog(settings: Settings) -> Catalog:
    return Catalog(
        modes=offered_modes(allow_bypass=settings.allow_bypass),
        models=tuple(model for _, model in offered(settings)),
        default_mode=settings.default_mode,
        default_thought_level=settings.thought_level,
    )


class OnDemand:
    """The MCP connector, made in a worker thread when a session first has servers:
    importing the MCP SDK takes ~0.9 s of CPU, which most sessions never need, and which
    would hold up every stream if done on the event loop."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._made: McpConnector | None = None

    async def __call__(self) -> McpConnector:
        if self._made is None:
            self._made = await asyncio.to_thread(self._make)
        return self._made

    def _make(self) -> McpConnector:
        from adapters.mcp.servers import SdkMcpConnector

        return SdkMcpConnector(connect_timeout=self._settings.mcp_connect_timeout)


def build_commands(*makers: Callable[[], Command]) -> CommandRegistry:
    """The built-in slash commands, in the order /help lists them."""
    return CommandRegistry(makers)


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    version = providers.Object("0.0.0")

    engine = providers.Singleton(make_engine, url=settings.provided.database_url)
    session_factory = providers.Singleton(async_sessionmaker, engine, expire_on_commit=False)
    read_factory = providers.Singleton(
        async_sessionmaker, providers.Callable(read_only, engine), expire_on_commit=False
    )
    # OpenTelemetry when OTEL_* variables configure an exporter; else the no-op tracer.
    tracer = providers.Singleton(make_tracer, settings.provided.traces_exporters)
    uow = providers.Factory(
        SqlAlchemyUnitOfWork,
        session_factory=session_factory,
        read_factory=read_factory,
        tracer=tracer,
    )
    # Turn leases: one prompt per session across every replica sharing the database.
    leases = providers.Singleton(
        SqlAlchemyTurnLeases,
        engine,
        reader=providers.Callable(read_only, engine),
        # PostgreSQL's replicas may run on several machines: their clocks need not agree.
        database_clock=providers.Callable(
            lambda url: backend(url) == "postgresql", settings.provided.database_url
        ),
    )
    lease_terms = providers.Singleton(
        LeaseTerms,
        holder=settings.provided.replica_id,
        seconds=settings.provided.lease_seconds,
        poll=settings.provided.lease_poll_seconds,
    )

    clock = providers.Singleton(SystemClock)
    ids = providers.Singleton(UuidIds)
    registry = providers.Singleton(SessionRegistry)
    # This machine's running replicas: a restarted agent takes its sessions back at once.
    presence = providers.Singleton(
        LockFilePresence,
        directory=providers.Callable(operator.truediv, settings.provided.config_dir, "replicas"),
        replica_id=settings.provided.replica_id,
    )
    leasing = providers.Singleton(
        TurnLeasing, leases=leases, clock=clock, terms=lease_terms, presence=presence
    )
    # Every live session/update numbered and kept (adapters/protocol/journal.py).
    journal = providers.Singleton(
        UpdateJournal,
        store=providers.Singleton(
            SqlAlchemyUpdateJournalStore, engine, reader=providers.Callable(read_only, engine)
        ),
        now=providers.Callable(lambda clock: clock.now, clock),
        terms=providers.Singleton(
            JournalTerms,
            flush_seconds=settings.provided.journal_flush_seconds,
            keep_events=settings.provided.journal_keep_events,
            keep_seconds=settings.provided.journal_keep_seconds,
        ),
    )
    connection_records = providers.Singleton(
        SqlAlchemyConnectionRecords,
        engine,
        now=providers.Callable(lambda clock: clock.now, clock),
        reader=providers.Callable(read_only, engine),
    )
    close = providers.Factory(CloseSession, registry=registry)
    # The shared sessions' room: who is attached, who controls, what follows as they go.
    room = providers.Singleton(
        Attachments,
        close=close.provided.execute,
        busy=registry.provided.is_busy,
        detached_timeout=settings.provided.detached_turn_timeout,
    )
    channels = providers.Singleton(SessionChannels, room, update_log=journal)
    catalog = providers.Singleton(build_catalog, settings)
    llm = providers.Singleton(build_llm, settings)
    limits = providers.Singleton(
        TurnLimits,
        max_turn_requests=settings.provided.max_turn_requests,
        max_tokens=settings.provided.max_tokens,
    )

    tool_limits = providers.Singleton(
        Limits,
        bash_timeout=settings.provided.bash_timeout,
        bash_max_timeout=settings.provided.bash_max_timeout,
    )
    local_tools = providers.Singleton(LocalToolRunner, tool_limits)
    tools = providers.Singleton(
        SubAgentTools,
        inner=local_tools,
        llm=llm,
        clock=clock,
        ids=ids,
        max_requests=settings.provided.max_turn_requests,
        max_tokens=settings.provided.max_tokens,
    )
    permissions = providers.Singleton(AcpPermissionAsker, room)
    knowledge = providers.Singleton(LocalProjectKnowledge, config_dir=settings.provided.config_dir)
    briefer = providers.Singleton(Briefer, knowledge=knowledge)
    # The editor's files and terminals where it lends them (ACP fs/*, terminal/*).
    workspaces = providers.Singleton(AcpWorkspaces, room, providers.Singleton(LocalWorkspace))
    change_settings = providers.Factory(
        ChangeSettings, uow=uow, sink=channels, clock=clock, catalog=catalog
    )
    # The tool phase, by job: the session's tools, what is shown and stored of each call,
    # the permission decision, leaving plan mode, running an allowed call.
    tool_catalogue = providers.Factory(
        ToolCatalogue,
        runner=tools,
        catalog=catalog,
        registry=registry,
        workspaces=workspaces,
        knowledge=knowledge,
    )
    tool_calls = providers.Factory(ToolCallLog, sink=channels, uow=uow)
    permission_desk = providers.Factory(
        PermissionDesk,
        asker=permissions,
        uow=uow,
        clock=clock,
        timeout=settings.provided.permission_timeout,
    )
    tool_phase = providers.Factory(
        ToolPhase,
        catalogue=tool_catalogue,
        calls=tool_calls,
        permissions=providers.Factory(
            PermissionFlow, desk=permission_desk, catalogue=tool_catalogue, clock=clock
        ),
        plan_exit=providers.Factory(
            PlanExit,
            desk=permission_desk,
            settings=change_settings,
            catalogue=tool_catalogue,
            calls=tool_calls,
        ),
        execution=providers.Factory(
            ToolExecution,
            catalogue=tool_catalogue,
            calls=tool_calls,
            registry=registry,
            briefer=briefer,
        ),
        tracer=tracer,
    )

    initialize = providers.Singleton(make_initialize, settings, version)
    open_with = providers.Factory(OpenWith, uow=uow, registry=registry)
    new_session = providers.Factory(
        NewSession,
        uow=uow,
        registry=registry,
        llm=llm,
        clock=clock,
        ids=ids,
        catalog=catalog,
        open_with=open_with,
        default_model=settings.provided.default_model,
        key_variable=settings.provided.key_hint,
    )
    stored = providers.Factory(StoredSessions, uow=uow, registry=registry, leasing=leasing)
    ownership = providers.Factory(TurnOwnership, leasing=leasing, stored=stored)
    load_session = providers.Factory(
        LoadSession, stored=stored, sink=channels, catalog=catalog, open_with=open_with
    )
    list_sessions = providers.Factory(ListSessions, uow=uow)
    resume_session = providers.Factory(
        ResumeSession, stored=stored, catalog=catalog, open_with=open_with
    )
    fork_session = providers.Factory(
        ForkSession,
        uow=uow,
        stored=stored,
        registry=registry,
        ids=ids,
        clock=clock,
        catalog=catalog,
        open_with=open_with,
    )
    rename_session = providers.Factory(
        RenameSession, uow=uow, stored=stored, registry=registry, sink=channels, clock=clock
    )
    delete_session = providers.Factory(DeleteSession, uow=uow, registry=registry, clock=clock)
    policy = providers.Singleton(
        CompactionPolicy,
        compact_at=settings.provided.compact_at,
        keep_turns=settings.provided.compact_keep_turns,
    )
    meter = providers.Singleton(ContextMeter, catalog=catalog, policy=policy)
    log = providers.Factory(SessionLog, uow=uow, sink=channels)
    requests = providers.Factory(
        RequestBuilder, catalog=catalog, tools=tool_catalogue, limits=limits, registry=registry
    )
    compactor = providers.Factory(
        Compactor, llm=llm, log=log, sink=channels, clock=clock, ids=ids, meter=meter
    )
    compact_command = providers.Factory(
        CompactCommand, compactor=compactor, meter=meter, requests=requests
    )
    clear_command = providers.Factory(
        ClearCommand, log=log, sink=channels, clock=clock, meter=meter, requests=requests
    )
    rename_command = providers.Factory(RenameCommand, rename=rename_session)
    model_command = providers.Factory(ModelCommand, settings=change_settings, catalog=catalog)
    mode_command = providers.Factory(ModeCommand, settings=change_settings, catalog=catalog)
    usage_command = providers.Factory(UsageCommand, meter=meter, requests=requests, sink=channels)
    help_command = providers.Factory(HelpCommand)
    memory_command = providers.Factory(
        MemoryCommand,
        knowledge=knowledge,
        registry=registry,
        config_dir=providers.Callable(str, settings.provided.config_dir),
    )
    commands = providers.Singleton(
        build_commands,
        compact_command.provider,
        clear_command.provider,
        rename_command.provider,
        model_command.provider,
        mode_command.provider,
        usage_command.provider,
        memory_command.provider,
        help_command.provider,
    )
    mcp_connector = providers.Singleton(OnDemand, settings)
    servers = providers.Factory(
        SessionServers,
        connector=mcp_connector,
        commands=commands,
        sink=channels,
        ids=ids,
        project_commands=briefer.provided.offered,
    )
    run_command = providers.Factory(
        RunCommand, registry=commands, log=log, sink=channels, clock=clock, ids=ids
    )
    # The prompt turn, by job: the built-in commands it may call, the prompt made ready,
    # the model's loop (room in the context, each reply streamed, the tool rounds).
    model_side = providers.Factory(ModelSide, llm=llm, requests=requests, meter=meter)
    turn_output = providers.Factory(TurnOutput, log=log, sink=channels, clock=clock, ids=ids)
    prompt = providers.Factory(
        Prompt,
        registry=registry,
        commands=providers.Factory(
            BuiltInCommands, registry=commands, runner=run_command, servers=servers
        ),
        preparation=providers.Factory(
            PromptPreparation,
            commands=commands,
            output=turn_output,
            servers=servers,
            briefer=briefer,
        ),
        turn=providers.Factory(
            ModelTurn,
            model=model_side,
            output=turn_output,
            tools=tool_phase,
            room=providers.Factory(
                ContextRoom, model=model_side, compactor=compactor, output=turn_output
            ),
            replies=providers.Factory(
                ReplyStream, model=model_side, output=turn_output, calls=tool_calls, tracer=tracer
            ),
        ),
        ownership=ownership,
        tracer=tracer,
    )
    announce = providers.Factory(
        AnnounceSession,
        sessions=registry,
        commands=commands,
        sink=channels,
        meter=meter,
        requests=requests,
        servers=servers,
        briefer=briefer,
    )
    cancel = providers.Factory(CancelTurn, registry=registry, leasing=leasing)
    set_mode = providers.Factory(SetMode, registry=registry, settings=change_settings)
    set_config_option = providers.Factory(
        SetConfigOption, registry=registry, settings=change_settings
    )

    use_cases = providers.Singleton(
        UseCases,
        initialize=initialize,
        has_credentials=llm.provided.has_credentials,
        new_session=new_session.provider,
        load_session=load_session.provider,
        list_sessions=list_sessions.provider,
        resume_session=resume_session.provider,
        fork_session=fork_session.provider,
        delete_session=delete_session.provider,
        rename_session=rename_session.provider,
        prompt=prompt.provider,
        cancel=cancel.provider,
        close=close.provider,
        set_mode=set_mode.provider,
        set_config_option=set_config_option.provider,
        announce=announce.provider,
        key_variable=settings.provided.key_hint,
    )
    agent = providers.Singleton(
        AcpAgent,
        use_cases=use_cases,
        room=room,
        channels=channels,
        max_image_bytes=settings.provided.max_image_bytes,
        journal=journal,
    )
    # HTTP connections taken up again after a restart (adapters/http/revival.py).
    revival = providers.Singleton(
        ConnectionRevival,
        agent=agent,
        journal=journal,
        records=connection_records,
        turn_state=providers.Singleton(
            TurnStates,
            busy=registry.provided.is_busy,
            awaiting=room.provided.awaiting_permission,
            holder_elsewhere=providers.Callable(
                held_elsewhere,
                leases,
                providers.Callable(lambda clock: clock.now, clock),
                settings.provided.replica_id,
            ),
        ),
        now=providers.Callable(lambda clock: clock.now, clock),
        keep_seconds=settings.provided.journal_keep_seconds,
    )


def migrated_container(settings: Settings, version: str) -> Container:
    """The container over a database at the newest schema (migrated now if needed)."""
    from adapters.persistence.migrate import upgrade_to_head

    if upgrade_to_head(settings.database_url):
        logging.getLogger(__name__).info("database migrated to the newest schema")
    container = Container(settings=settings, version=version)
    container.presence().here()  # before any lease is taken
    # A command added later (e.g. from an MCP server) reaches every open session.
    container.commands().subscribe(lambda: container.announce().commands_changed())
    return container


def warm_model(container: Container) -> None:
    """Import the model SDK now (it takes ~1.3 s and holds the GIL), so that no prompt
    or stream waits for it later."""
    resolve = getattr(container.llm(), "resolve", None)
    if resolve is not None:
        resolve()


async def release(container: Container) -> None:
    """Stop what a container started, in order: sessions (their turns, MCP servers), then
    the journal's last updates, then the database pool. Whatever ends a server or a test's
    container ends it this way, so no write is left running against a closed pool."""
    await container.registry().close_all()
    await container.journal().aclose()
    await container.engine().dispose()
