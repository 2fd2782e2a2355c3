"""The ACP protocol: the `initialize` answer, the method table's use cases, the agent every
transport hands messages to (ACP v1's face on the protocol core), and the revival of HTTP
connections after a restart."""

from dependency_injector import containers, providers

from adapters.acp_v1.agent import AcpAgent
from adapters.protocol.revival import ConnectionRevival
from adapters.protocol.use_cases import UseCases
from application.attachments.turn_state import TurnStates, held_elsewhere
from bootstrap.offered_models import make_initialize


class Acp(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()
    sessions = providers.DependenciesContainer()
    prompting = providers.DependenciesContainer()

    initialize = providers.Singleton(make_initialize, core.settings, core.version)
    use_cases = providers.Singleton(
        UseCases,
        initialize=initialize,
        has_credentials=gateways.llm.provided.has_credentials,
        new_session=sessions.new_session.provider,
        load_session=sessions.load_session.provider,
        list_sessions=sessions.list_sessions.provider,
        resume_session=sessions.resume_session.provider,
        fork_session=sessions.fork_session.provider,
        delete_session=sessions.delete_session.provider,
        rename_session=sessions.rename_session.provider,
        rewind_session=sessions.rewind_session.provider,
        edit_prompt=prompting.edit_prompt.provider,
        prompt=prompting.prompt.provider,
        cancel=sessions.cancel.provider,
        close=clients.close_by_client.provider,
        set_mode=sessions.set_mode.provider,
        set_config_option=sessions.set_config_option.provider,
        announce=prompting.announce.provider,
        steer=sessions.steer.provider,
        queue=sessions.queue.provider,
        tell=sessions.tell.provider,
        key_variable=core.settings.provided.key_hint,
    )
    agent = providers.Singleton(
        AcpAgent,
        use_cases=use_cases,
        room=clients.room,
        channels=clients.channels,
        max_image_bytes=core.settings.provided.max_image_bytes,
        journal=clients.journal,
        replicas=clients.replicas,
    )
    # HTTP connections taken up again after a restart (adapters/http/revival.py).
    revival = providers.Singleton(
        ConnectionRevival,
        agent=agent,
        rendering=clients.rendering,
        journal=clients.journal,
        records=storage.connection_records,
        turn_state=providers.Singleton(
            TurnStates,
            busy=core.registry.provided.is_busy,
            awaiting=clients.room.provided.awaiting_permission,
            holder_elsewhere=providers.Callable(
                held_elsewhere, storage.leases, core.now, core.settings.provided.replica_id
            ),
        ),
        now=core.now,
        keep_seconds=core.settings.provided.journal_keep_seconds,
    )
