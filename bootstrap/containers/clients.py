"""What reaches the connected clients: every session/update journaled and delivered,
permission asks, the editor's files and terminals where it lends them."""

from dependency_injector import containers, providers

from adapters.protocol.channels import SessionChannels
from adapters.protocol.journal import JournalTerms, UpdateJournal
from adapters.protocol.permissions import AcpPermissionAsker
from adapters.workspace.client import AcpWorkspaces


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
    channels = providers.Singleton(
        SessionChannels, update_log=journal, busy=core.registry.provided.is_busy
    )
    permissions = providers.Singleton(AcpPermissionAsker, channels)
    # The editor's files and terminals where it lends them (ACP fs/*, terminal/*).
    workspaces = providers.Singleton(AcpWorkspaces, channels, gateways.local_workspace)
