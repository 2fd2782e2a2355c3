"""What a turn is made of: the tools a session has and the phase that runs them, the
session's log, its context meter and compaction, the request built for the model."""

from dependency_injector import containers, providers

from application.use_cases.briefing import Briefer
from application.use_cases.compaction import Compactor
from application.use_cases.context_meter import CompactionPolicy, ContextMeter
from application.use_cases.model_request import RequestBuilder, TurnLimits
from application.use_cases.session_log import SessionLog
from application.use_cases.tool_phase import ToolPhase


class Turn(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()
    sessions = providers.DependenciesContainer()

    briefer = providers.Singleton(Briefer, knowledge=gateways.knowledge)
    tool_phase = providers.Factory(
        ToolPhase,
        uow=storage.uow,
        runner=gateways.tools,
        asker=clients.permissions,
        sink=clients.channels,
        clock=core.clock,
        permission_timeout=core.settings.provided.permission_timeout,
        catalog=core.catalog,
        settings=sessions.change_settings,
        registry=core.registry,
        workspaces=clients.workspaces,
        knowledge=gateways.knowledge,
        briefer=briefer,
        tracer=core.tracer,
    )
    limits = providers.Singleton(
        TurnLimits,
        max_turn_requests=core.settings.provided.max_turn_requests,
        max_tokens=core.settings.provided.max_tokens,
    )
    requests = providers.Factory(
        RequestBuilder,
        catalog=core.catalog,
        tools=tool_phase,
        limits=limits,
        registry=core.registry,
    )
    policy = providers.Singleton(
        CompactionPolicy,
        compact_at=core.settings.provided.compact_at,
        keep_turns=core.settings.provided.compact_keep_turns,
    )
    meter = providers.Singleton(ContextMeter, catalog=core.catalog, policy=policy)
    log = providers.Factory(SessionLog, uow=storage.uow, sink=clients.channels)
    compactor = providers.Factory(
        Compactor,
        llm=gateways.llm,
        log=log,
        sink=clients.channels,
        clock=core.clock,
        ids=core.ids,
        meter=meter,
    )
