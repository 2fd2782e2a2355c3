"""What reaches the connected clients: the room of the shared sessions, every
session/update journaled and delivered, permission asks and questions for the user, the
editor's files and terminals where it lends them."""

from dependency_injector import containers, providers

from adapters.protocol.channels import SessionChannels
from adapters.protocol.elicitation import AcpElicitor
from adapters.protocol.journal import JournalTerms, UpdateJournal
from adapters.protocol.permissions import AcpPermissionAsker
from adapters.protocol.relay import ClusterRelay, RelayTerms
from adapters.workspace.client import AcpWorkspaces
from application.attachments.room import Attachments
from application.use_cases.background_tasks import BackgroundTasks
from application.use_cases.lifecycle import CloseSession
from application.use_cases.session_notices import SessionNotices


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
    # Here, not with the other session use cases: the room closes a session its last
    # client left, and the use cases' event sink (the channels) needs the room.
    close = providers.Factory(CloseSession, registry=core.registry)
    # The shared sessions' room: who is attached, who controls, what follows as they go.
    room = providers.Singleton(
        Attachments,
        close=close.provided.execute,
        busy=core.registry.provided.is_busy,
        detached_timeout=core.settings.provided.detached_turn_timeout,
    )
    channels = providers.Singleton(SessionChannels, room, update_log=journal)
    # Updates of sessions followed on other replicas (PostgreSQL; started by the server).
    relay = providers.Singleton(
        ClusterRelay,
        replica_id=core.settings.provided.replica_id,
        channels=channels,
        journal=journal,
        store=storage.journal_store,
        registry=storage.cluster_attachments,
        signals=storage.signals,
        leases=storage.leases,
        now=core.now,
        terms=providers.Singleton(RelayTerms, lease_seconds=core.settings.provided.lease_seconds),
    )
    permissions = providers.Singleton(AcpPermissionAsker, room)
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
