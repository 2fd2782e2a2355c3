"""What a turn is made of: the tools a session has and the phase that runs them, the
session's log, its context meter and compaction, the request built for the model."""

from dependency_injector import containers, providers

from application.use_cases.ask_user import AskUser
from application.use_cases.briefing import Briefer
from application.use_cases.compaction import Compactor
from application.use_cases.context_meter import CompactionPolicy, ContextMeter
from application.use_cases.model_request import RequestBuilder, TurnLimits
from application.use_cases.permission_desk import PermissionDesk
from application.use_cases.plan_exit import PlanExit
from application.use_cases.session_log import SessionLog
from application.use_cases.tool_call_log import ToolCallLog
from application.use_cases.tool_catalogue import ToolCatalogue
from application.use_cases.tool_execution import ToolExecution
from application.use_cases.tool_permissions import PermissionFlow
from application.use_cases.tool_phase import ToolPhase


class Turn(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()
    sessions = providers.DependenciesContainer()

    briefer = providers.Singleton(Briefer, knowledge=gateways.knowledge)
    # The tool phase, by job: the session's tools, what is shown and stored of each call,
    # the permission decision, leaving plan mode, running an allowed call.
    tool_catalogue = providers.Factory(
        ToolCatalogue,
        runner=gateways.tools,
        catalog=core.catalog,
        registry=core.registry,
        workspaces=clients.workspaces,
        knowledge=gateways.knowledge,
        elicitor=clients.elicitor,
        background=True,
        sink=clients.channels,
    )
    tool_calls = providers.Factory(ToolCallLog, sink=clients.channels, uow=storage.uow)
    permission_desk = providers.Factory(
        PermissionDesk,
        asker=clients.permissions,
        uow=storage.uow,
        clock=core.clock,
        timeout=core.settings.provided.permission_timeout,
    )
    tool_phase = providers.Factory(
        ToolPhase,
        max_subagents=core.settings.provided.max_subagents,
        catalogue=tool_catalogue,
        calls=tool_calls,
        permissions=providers.Factory(
            PermissionFlow,
            desk=permission_desk,
            catalogue=tool_catalogue,
            clock=core.clock,
            sink=clients.channels,
        ),
        plan_exit=providers.Factory(
            PlanExit,
            desk=permission_desk,
            settings=sessions.change_settings,
            catalogue=tool_catalogue,
            calls=tool_calls,
        ),
        execution=providers.Factory(
            ToolExecution,
            catalogue=tool_catalogue,
            calls=tool_calls,
            registry=core.registry,
            briefer=briefer,
            ask_user=providers.Factory(
                AskUser,
                elicitor=clients.elicitor,
                calls=tool_calls,
                timeout=core.settings.provided.permission_timeout,
            ),
            tasks=clients.tasks,
            checkpoints=sessions.file_checkpoints,
        ),
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
        tools=tool_catalogue,
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
        llm=gateways.quiet_llm,
        log=log,
        sink=clients.channels,
        clock=core.clock,
        ids=core.ids,
        meter=meter,
    )
