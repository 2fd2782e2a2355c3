"""What reaches the connected clients: the room of the shared sessions, every
session/update journaled and delivered (to the clients attached on other replicas too),
permission asks and questions for the user, the editor's files and terminals where it
lends them."""

from dependency_injector import containers, providers

from adapters.acp_v1.elicitation import AcpElicitor
from adapters.acp_v1.rendering import V1Rendering
from adapters.cluster.questions import RelayedQuestions
from adapters.cluster.relay import ClusterRelay
from adapters.cluster.relaying import Relaying
from adapters.cluster.replicas import ClusterReplicas
from adapters.cluster.routes import RelayTerms
from adapters.cluster.routing import RequestRouter, RoutingTerms
from adapters.protocol.channels import SessionChannels
from adapters.protocol.connection import Connection
from adapters.protocol.journal import JournalTerms, UpdateJournal
from adapters.protocol.replicas import OneProcess, live_elsewhere
from adapters.workspace.client import AcpWorkspaces
from application.attachments.permissions import RoomPermissions
from application.attachments.room import Attachments
from application.notices.session_notices import SessionNotices
from application.sessions.lifecycle import CloseSession
from application.tasks.background_tasks import BackgroundTasks
from bootstrap.containers.storage import is_postgresql


def replicas_kind(database_url: str) -> str:
    """Replicas on PostgreSQL signal each other (the cluster); on SQLite (one process, or
    one machine's) they share leases only."""
    return "cluster" if is_postgresql(database_url) else "one_process"


class Clients(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()

    # Every live session/update numbered and kept (adapters/protocol/journal.py).
    journal = providers.Singleton(
        UpdateJournal,
        store=storage.journal_store,
        now=core.now,
        terms=providers.Singleton(
            JournalTerms,
            flush_seconds=core.settings.provided.journal_flush_seconds,
            keep_events=core.settings.provided.journal_keep_events,
            keep_seconds=core.settings.provided.journal_keep_seconds,
        ),
    )
    # The shared sessions' room: who is attached, who controls, what follows as they go.
    # A session its last client's connection left is only dropped from memory (its
    # background tasks go on: a client attaching again finds them).
    room: providers.Singleton[Attachments[Connection]] = providers.Singleton(
        Attachments,
        close=core.registry.provided.close,
        busy=core.registry.provided.is_busy,
        detached_timeout=core.settings.provided.detached_turn_timeout,
    )
    # Updates rendered as ACP v1 says them, once for all of a session's clients.
    rendering = providers.Singleton(V1Rendering)
    channels = providers.Singleton(SessionChannels, room, rendering, update_log=journal)
    # Whether another live process holds a session's turn: the leases, and (on one
    # machine) whether the holder's process still runs.
    held_elsewhere = providers.Callable(
        live_elsewhere,
        storage.leases,
        storage.presence,
        core.now,
        core.settings.provided.replica_id,
    )
    # The other replicas (adapters/cluster, PostgreSQL; started by the HTTP server).
    relaying = providers.Singleton(
        Relaying,
        replica_id=core.settings.provided.replica_id,
        room=room,
        channels=channels,
        journal=journal,
        store=storage.journal_store,
        registry=storage.cluster_attachments,
        signals=storage.signals,
        leases=storage.leases,
        now=core.now,
        terms=providers.Singleton(RelayTerms, lease_seconds=core.settings.provided.lease_seconds),
    )
    router = providers.Singleton(
        RequestRouter,
        store=storage.routed_requests,
        signals=storage.signals,
        leases=storage.leases,
        clock=core.clock,
        terms=providers.Singleton(
            RoutingTerms,
            replica_id=core.settings.provided.replica_id,
            grace=core.settings.provided.lease_seconds,
        ),
    )
    cluster = providers.Singleton(
        ClusterReplicas,
        relay=providers.Singleton(ClusterRelay, relaying),
        router=router,
        questions=providers.Singleton(
            RelayedQuestions,
            room=room,
            store=storage.routed_requests,
            signals=storage.signals,
            router=router,
            clock=core.clock,
            replica_id=core.settings.provided.replica_id,
        ),
        channels=channels,
        held_elsewhere=held_elsewhere,
    )
    replicas = providers.Selector(
        providers.Callable(replicas_kind, core.settings.provided.database_url),
        cluster=cluster,
        one_process=providers.Singleton(OneProcess, held_elsewhere),
    )
    permissions = providers.Singleton(RoomPermissions, room)
    # Questions for the user (ACP elicitation), to the clients that advertised it.
    elicitor = providers.Singleton(AcpElicitor, room)
    # The editor's files and terminals where it lends them (ACP fs/*, terminal/*).
    workspaces = providers.Singleton(AcpWorkspaces, room, gateways.local_workspace)
    # What the agent tells a session's users outside any reply (notices, issue 27).
    notices = providers.Factory(SessionNotices, sink=channels, ids=core.ids)
    # Every session's background tasks: they outlive turns and clients, not their session.
    tasks = providers.Singleton(
        BackgroundTasks,
        sink=channels,
        uow=storage.uow,
        clock=core.clock,
        notices=notices,
        registry=core.registry,
        max_tasks=core.settings.provided.max_tasks,
    )
    # `session/close` from the last client: the session's background tasks end with it
    # (the room's own close, when the last client's connection goes, leaves them running).
    close_by_client = providers.Factory(CloseSession, registry=core.registry, tasks=tasks)
