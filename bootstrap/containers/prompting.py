"""The prompt and what it hands work to: slash commands (built in, or added by a session's
MCP servers), the turn's ownership; and the announcement that tells a session's clients
which commands it has."""

from dependency_injector import containers, providers

from application.use_cases.announce import AnnounceSession
from application.use_cases.commands.run import RunCommand
from application.use_cases.prompt import Prompt
from application.use_cases.session_servers import SessionServers
from application.use_cases.turn_ownership import TurnOwnership


class Prompting(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()
    sessions = providers.DependenciesContainer()
    turn = providers.DependenciesContainer()
    commands = providers.DependenciesContainer()

    servers = providers.Factory(
        SessionServers,
        connector=gateways.mcp_connector,
        commands=commands.registry,
        sink=clients.channels,
        ids=core.ids,
        project_commands=turn.briefer.provided.offered,
    )
    run_command = providers.Factory(
        RunCommand,
        registry=commands.registry,
        log=turn.log,
        sink=clients.channels,
        clock=core.clock,
        ids=core.ids,
    )
    ownership = providers.Factory(TurnOwnership, leasing=sessions.leasing, stored=sessions.stored)
    prompt = providers.Factory(
        Prompt,
        registry=core.registry,
        llm=gateways.llm,
        sink=clients.channels,
        clock=core.clock,
        ids=core.ids,
        tools=turn.tool_phase,
        requests=turn.requests,
        log=turn.log,
        meter=turn.meter,
        compactor=turn.compactor,
        commands=commands.registry,
        run_command=run_command,
        servers=servers,
        briefer=turn.briefer,
        ownership=ownership,
        tracer=core.tracer,
    )
    announce = providers.Factory(
        AnnounceSession,
        sessions=core.registry,
        commands=commands.registry,
        sink=clients.channels,
        meter=turn.meter,
        requests=turn.requests,
        servers=servers,
        briefer=turn.briefer,
    )
