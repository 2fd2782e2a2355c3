"""The built-in slash commands, and the registry /help lists them from."""

from collections.abc import Callable

from dependency_injector import containers, providers

from application.commands.agents import AgentsCommand
from application.commands.context import ClearCommand, CompactCommand
from application.commands.info import HelpCommand, UsageCommand
from application.commands.memory import MemoryCommand
from application.commands.queue import QueueCommand
from application.commands.rewind import RewindCommand
from application.commands.settings import ModeCommand, ModelCommand, RenameCommand
from application.commands.tasks import TasksCommand
from application.commands.worktree import WorktreeCommand
from application.runtime.command_registry import Command, CommandRegistry


def build_commands(*makers: Callable[[], Command]) -> CommandRegistry:
    """The built-in slash commands, in the order /help lists them."""
    return CommandRegistry(makers)


class Commands(containers.DeclarativeContainer):
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
    tasks_command = providers.Factory(TasksCommand, tasks=clients.tasks, clock=core.clock)
    queue_command = providers.Factory(QueueCommand, queue=sessions.queue)
    rewind_command = providers.Factory(RewindCommand, rewind=sessions.rewind_session)
    memory_command = providers.Factory(
        MemoryCommand,
        knowledge=gateways.knowledge,
        registry=core.registry,
        config_dir=providers.Callable(str, core.settings.provided.config_dir),
    )
    agents_command = providers.Factory(AgentsCommand, knowledge=gateways.knowledge)
    worktree_command = providers.Factory(WorktreeCommand, worktrees=sessions.worktrees)
    registry = providers.Singleton(
        build_commands,
        compact_command.provider,
        clear_command.provider,
        rename_command.provider,
        model_command.provider,
        mode_command.provider,
        usage_command.provider,
        memory_command.provider,
        tasks_command.provider,
        agents_command.provider,
        queue_command.provider,
        rewind_command.provider,
        worktree_command.provider,
        help_command.provider,
    )
