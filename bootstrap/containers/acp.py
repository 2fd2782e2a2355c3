"""The ACP protocol core: the `initialize` answer, the method table's use cases, the agent
every transport hands messages to, and the revival of HTTP connections after a restart."""

from dependency_injector import containers, providers

from adapters.protocol.agent import AcpAgent
from adapters.protocol.dropped_queues import live_elsewhere
from adapters.protocol.relayed_questions import RelayedQuestions
from adapters.protocol.revival import ConnectionRevival
from adapters.protocol.routing import RequestRouter, RoutingTerms
from adapters.protocol.use_cases import UseCases
from application.attachments.room import Attachments
from application.attachments.turn_state import TurnStates, held_elsewhere
from application.ports.clock import Clock
from application.ports.cluster_signals import ClusterSignals
from application.ports.leases import TurnLeases
from application.ports.routed_requests import RoutedRequests
from bootstrap.containers.storage import is_postgresql
from bootstrap.offered_models import make_initialize


def request_router(
    database_url: str,
    store: RoutedRequests,
    signals: ClusterSignals,
    leases: TurnLeases,
    clock: Clock,
    replica_id: str,
    lease_seconds: float,
) -> RequestRouter | None:
    """Requests routed to the replica running a turn: replicas on PostgreSQL signal each
    other; on SQLite (one process, or one machine's) there is no router."""
    if not is_postgresql(database_url):
        return None
    terms = RoutingTerms(replica_id=replica_id, grace=lease_seconds)
    return RequestRouter(store=store, signals=signals, leases=leases, clock=clock, terms=terms)


def relayed_questions(
    router: RequestRouter | None,
    room: Attachments,
    store: RoutedRequests,
    signals: ClusterSignals,
    clock: Clock,
    replica_id: str,
) -> RelayedQuestions | None:
    """Permission requests shown on every replica: only where requests are routed."""
    if router is None:
        return None
    return RelayedQuestions(
        room=room, store=store, signals=signals, router=router, clock=clock, replica_id=replica_id
    )


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
    router = providers.Singleton(
        request_router,
        database_url=core.settings.provided.database_url,
        store=storage.routed_requests,
        signals=storage.signals,
        leases=storage.leases,
        clock=core.clock,
        replica_id=core.settings.provided.replica_id,
        lease_seconds=core.settings.provided.lease_seconds,
    )
    relayed = providers.Singleton(
        relayed_questions,
        router=router,
        room=clients.room,
        store=storage.routed_requests,
        signals=storage.signals,
        clock=core.clock,
        replica_id=core.settings.provided.replica_id,
    )
    agent = providers.Singleton(
        AcpAgent,
        router=router,
        relayed=relayed,
        use_cases=use_cases,
        room=clients.room,
        channels=clients.channels,
        max_image_bytes=core.settings.provided.max_image_bytes,
        journal=clients.journal,
        held_elsewhere=providers.Callable(
            live_elsewhere,
            storage.leases,
            storage.presence,
            core.now,
            core.settings.provided.replica_id,
        ),
    )
    # HTTP connections taken up again after a restart (adapters/http/revival.py).
    revival = providers.Singleton(
        ConnectionRevival,
        agent=agent,
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
