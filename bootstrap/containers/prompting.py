"""The prompt and what it hands work to: slash commands (built in, or added by a session's
MCP servers), the turn's ownership; and the announcement that tells a session's clients
which commands it has."""

from dependency_injector import containers, providers

from application.agent_loop.context_room import ContextRoom
from application.agent_loop.model_turn import ModelTurn
from application.agent_loop.parts import ModelSide, TurnOutput
from application.agent_loop.provider_retry import ProviderRetry
from application.agent_loop.reply_stream import ReplyStream
from application.commands.dispatch import BuiltInCommands
from application.commands.run import RunCommand
from application.mcp.session_servers import SessionServers
from application.turn.announce import AnnounceSession
from application.turn.edit_prompt import EditPrompt
from application.turn.ownership import TurnOwnership
from application.turn.preparation import PromptPreparation
from application.turn.prompt import Prompt
from application.turn.task_follow_up import TaskFollowUp


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
        elicitor=clients.elicitor,
        elicitation_timeout=core.settings.provided.permission_timeout,
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
    # The prompt turn, by job: the built-in commands it may call, the prompt made ready,
    # the model's loop (room in the context, each reply streamed, the tool rounds).
    model_side = providers.Factory(
        ModelSide, llm=gateways.llm, requests=turn.requests, meter=turn.meter
    )
    turn_output = providers.Factory(
        TurnOutput, log=turn.log, sink=clients.channels, clock=core.clock, ids=core.ids
    )
    # A failed model request is asked again here, each wait told (gateways: the terms).
    provider_retry = providers.Factory(
        ProviderRetry,
        terms=gateways.retry_terms,
        sink=clients.channels,
        clock=core.clock,
        ids=core.ids,
    )
    prompt = providers.Factory(
        Prompt,
        registry=core.registry,
        commands=providers.Factory(
            BuiltInCommands, registry=commands.registry, runner=run_command, servers=servers
        ),
        preparation=providers.Factory(
            PromptPreparation,
            commands=commands.registry,
            output=turn_output,
            servers=servers,
            briefer=turn.briefer,
            tasks=clients.tasks,
            clock=core.clock,
        ),
        turn=providers.Factory(
            ModelTurn,
            model=model_side,
            output=turn_output,
            tools=turn.tool_phase,
            room=providers.Factory(
                ContextRoom, model=model_side, compactor=turn.compactor, output=turn_output
            ),
            replies=providers.Factory(
                ReplyStream,
                model=model_side,
                output=turn_output,
                calls=turn.tool_calls,
                tracer=core.tracer,
                retry=provider_retry,
            ),
        ),
        ownership=ownership,
        tracer=core.tracer,
    )
    # A turn for the model when a background task ends while its session is idle.
    task_follow_up = providers.Factory(TaskFollowUp, prompt=prompt, registry=core.registry)
    edit_prompt = providers.Factory(
        EditPrompt, rewind=sessions.rewind_session, prompt=prompt, registry=core.registry
    )
    announce = providers.Factory(
        AnnounceSession,
        sessions=core.registry,
        sink=clients.channels,
        model=model_side,
        servers=servers,
        briefer=turn.briefer,
        catalog=core.catalog,
        tasks=clients.tasks,
    )
