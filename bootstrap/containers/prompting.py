"""The prompt and what it hands work to: the slash commands (built in, or added by a
session's MCP servers), the turn's ownership; and the announcement that tells a session's
clients which commands it has."""

from collections.abc import Callable

from dependency_injector import containers, providers

from application.commands import Command, CommandRegistry
from application.use_cases.announce import AnnounceSession
from application.use_cases.commands.context import ClearCommand, CompactCommand
from application.use_cases.commands.info import HelpCommand, UsageCommand
from application.use_cases.commands.memory import MemoryCommand
from application.use_cases.commands.run import RunCommand
from application.use_cases.commands.settings import ModeCommand, ModelCommand, RenameCommand
from application.use_cases.prompt import Prompt
from application.use_cases.session_servers import SessionServers
from application.use_cases.turn_ownership import TurnOwnership


def build_commands(*makers: Callable[[], Command]) -> CommandRegistry:
    """The built-in slash commands, in the order /help lists them."""
    return CommandRegistry(makers)


class Prompting(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()
    sessions = providers.DependenciesContainer()
    turn = providers.DependenciesContainer()

    compact_command = providers.Factory(
        CompactCommand, compactor=turn.compactor, meter=turn.meter, requests=turn.requests
    )
    clear_command = providers.Factory(
        ClearCommand,
        log=turn.log,
        sink=clients.channels,
        clock=core.clock,
        meter=turn.meter,
        requests=turn.requests,
    )
    rename_command = providers.Factory(RenameCommand, rename=sessions.rename_session)
    model_command = providers.Factory(
        ModelCommand, settings=sessions.change_settings, catalog=core.catalog
    )
    mode_command = providers.Factory(
        ModeCommand, settings=sessions.change_settings, catalog=core.catalog
    )
    usage_command = providers.Factory(
        UsageCommand, meter=turn.meter, requests=turn.requests, sink=clients.channels
    )
    help_command = providers.Factory(HelpCommand)
    memory_command = providers.Factory(
        MemoryCommand,
        knowledge=gateways.knowledge,
        registry=core.registry,
        config_dir=providers.Callable(str, core.settings.provided.config_dir),
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
    servers = providers.Factory(
        SessionServers,
        connector=gateways.mcp_connector,
        commands=commands,
        sink=clients.channels,
        ids=core.ids,
        project_commands=turn.briefer.provided.offered,
    )
    run_command = providers.Factory(
        RunCommand,
        registry=commands,
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
        commands=commands,
        run_command=run_command,
        servers=servers,
        briefer=turn.briefer,
        ownership=ownership,
        tracer=core.tracer,
    )
    announce = providers.Factory(
        AnnounceSession,
        sessions=core.registry,
        commands=commands,
        sink=clients.channels,
        meter=turn.meter,
        requests=turn.requests,
        servers=servers,
        briefer=turn.briefer,
    )
