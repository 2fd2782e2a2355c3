"""What a turn is made of: the tools a session has (the sub-agent among them) and the phase
that runs them, the session's log, its context meter and compaction, the request built for
the model."""

from dependency_injector import containers, providers

from application.agent_loop.model_request import RequestBuilder, TurnLimits
from application.agent_loop.system_prompts import SessionPrompt
from application.compaction.compactor import Compactor
from application.compaction.context_meter import CompactionPolicy, ContextMeter
from application.history.session_log import SessionLog
from application.knowledge.briefing import Briefer
from application.knowledge.shared import SharedKnowledge
from application.subagents.child_sessions import ChildSessions
from application.subagents.child_turns import ChildModel, ChildTurns
from application.subagents.subagent import SubAgentTools
from application.tools.ask_user import AskUser
from application.tools.call_log import ToolCallLog
from application.tools.call_watch import SessionWatch
from application.tools.catalogue import ToolCatalogue
from application.tools.execution import ToolExecution
from application.tools.gate import SessionGate
from application.tools.own_tools import SessionOwnTools
from application.tools.permission_desk import PermissionDesk
from application.tools.permissions import PermissionFlow
from application.tools.phase import ToolPhase
from application.tools.plan_exit import PlanExit
from application.tools.sandbox_waivers import SandboxWaivers


class Turn(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()
    sessions = providers.DependenciesContainer()

    # One Briefer, with the one copy of what each project's sessions are told.
    briefer = providers.Singleton(
        Briefer, knowledge=gateways.knowledge, shared=providers.Singleton(SharedKnowledge)
    )
    limits = providers.Singleton(
        TurnLimits,
        max_turn_requests=core.settings.provided.max_turn_requests,
        max_tokens=core.settings.provided.max_tokens,
    )
    policy = providers.Singleton(
        CompactionPolicy,
        compact_at=core.settings.provided.compact_at,
        keep_turns=core.settings.provided.compact_keep_turns,
    )
    meter = providers.Singleton(ContextMeter, catalog=core.catalog, policy=policy)
    # The `agent` tool over the local tools: each call a child's turn on the agent loop,
    # on the same model, terms and limits as the session's, stored as a session of its own.
    subagent_tools = providers.Singleton(
        SubAgentTools,
        inner=gateways.local_tools,
        turns=providers.Factory(
            ChildTurns,
            model=providers.Factory(
                ChildModel,
                llm=gateways.llm,
                summaries=gateways.quiet_llm,
                catalog=core.catalog,
                limits=limits,
                meter=meter,
                retry=gateways.retry_terms,
            ),
            uow=storage.uow.provider,
            clock=core.clock,
            ids=core.ids,
            tracer=core.tracer,
        ),
        children=providers.Factory(ChildSessions, uow=storage.uow.provider),
        runs=gateways.subagent_runs,
        clock=core.clock,
        ids=core.ids,
    )
    # The tool phase, by job: the session's tools, what is shown and stored of each call,
    # the gate (the permission decision, leaving plan mode), running an allowed call.
    # The calls the user let run once outside the sandbox: granted by the permission flow,
    # taken when the call's workspace is made.
    waivers = providers.Singleton(SandboxWaivers)
    tool_catalogue = providers.Factory(
        ToolCatalogue,
        waivers=waivers,
        runner=subagent_tools,
        catalog=core.catalog,
        registry=core.registry,
        workspaces=clients.workspaces,
        knowledge=gateways.knowledge,
        elicitor=clients.elicitor,
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
        tools=tool_catalogue,
        calls=tool_calls,
        gate=providers.Factory(
            SessionGate,
            permissions=providers.Factory(
                PermissionFlow,
                waivers=waivers,
                desk=permission_desk,
                catalog=core.catalog,
                clock=core.clock,
                sink=clients.channels,
            ),
            plan_exit=providers.Factory(
                PlanExit,
                desk=permission_desk,
                settings=sessions.change_settings,
                catalog=core.catalog,
                calls=tool_calls,
            ),
            calls=tool_calls,
        ),
        execution=providers.Factory(
            ToolExecution,
            tools=tool_catalogue,
            calls=tool_calls,
            own=providers.Factory(
                SessionOwnTools,
                calls=tool_calls,
                ask_user=providers.Factory(
                    AskUser,
                    elicitor=clients.elicitor,
                    calls=tool_calls,
                    timeout=core.settings.provided.permission_timeout,
                ),
                tasks=clients.tasks,
                workspaces=clients.workspaces,
                catalog=core.catalog,
                waivers=waivers,
            ),
            watch=providers.Factory(
                SessionWatch,
                checkpoints=sessions.file_checkpoints,
                registry=core.registry,
                briefer=briefer,
            ),
        ),
        tracer=core.tracer,
    )
    requests = providers.Factory(
        RequestBuilder,
        catalog=core.catalog,
        tools=tool_catalogue,
        limits=limits,
        prompt=providers.Factory(SessionPrompt, catalog=core.catalog, registry=core.registry),
    )
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
