"""The session lifecycle's use cases: open, load, list, resume, fork, rename, delete,
settings, cancel (close is with the room, in clients.py); and the turn leases they hold."""

from pathlib import Path

from dependency_injector import containers, providers

from adapters.workspace.disk_files import DiskFiles
from adapters.workspace.file_scan import SnapshotScanner
from adapters.workspace.worktrees import GitWorktrees
from application.checkpoints.file_checkpoints import FileCheckpoints
from application.checkpoints.restoring import FileRestorer
from application.notices.telling import TellSession
from application.rewind.restore_permission import RestorePermission
from application.rewind.rewind import RewindSession
from application.runtime.queueing import QueuePrompts
from application.sessions.delete import DeleteSession
from application.sessions.fork import ForkSession
from application.sessions.lifecycle import CancelTurn
from application.sessions.listing import ListSessions
from application.sessions.load_session import LoadSession, StoredSessions
from application.sessions.new_session import Fresh, ModelAccess, NewSession
from application.sessions.opening import OpenWith
from application.sessions.rename import RenameSession
from application.sessions.resume import ResumeSession
from application.sessions.settings import ChangeSettings, SetConfigOption, SetMode
from application.sessions.turn_lease import LeaseTerms, TurnLeasing
from application.turn.steering import SteerSession
from bootstrap.settings import Settings
from domain.worktree import Isolation


def worktrees_root(settings: Settings) -> Path:
    return settings.config_dir / "worktrees"


class Sessions(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()
    storage = providers.DependenciesContainer()
    gateways = providers.DependenciesContainer()
    clients = providers.DependenciesContainer()

    lease_terms = providers.Singleton(
        LeaseTerms,
        holder=core.settings.provided.replica_id,
        seconds=core.settings.provided.lease_seconds,
        poll=core.settings.provided.lease_poll_seconds,
    )
    leasing = providers.Singleton(
        TurnLeasing,
        leases=storage.leases,
        clock=core.clock,
        terms=lease_terms,
        presence=storage.presence,
    )
    change_settings = providers.Factory(
        ChangeSettings,
        uow=storage.uow,
        sink=clients.channels,
        clock=core.clock,
        catalog=core.catalog,
    )
    open_with = providers.Factory(OpenWith, uow=storage.uow, registry=core.registry)
    # Sessions in worktrees of their own (IAC_CODE_ISOLATION, _meta.iac_code.isolation),
    # made under the server's directory.
    worktrees = providers.Singleton(
        GitWorktrees, root=providers.Callable(worktrees_root, core.settings)
    )
    new_session = providers.Factory(
        NewSession,
        worktrees=worktrees,
        isolation=providers.Callable(Isolation, core.settings.provided.isolation),
        uow=storage.uow,
        registry=core.registry,
        open_with=open_with,
        fresh=providers.Factory(
            Fresh,
            ids=core.ids,
            clock=core.clock,
            catalog=core.catalog,
            default_model=core.settings.provided.default_model,
        ),
        access=providers.Factory(
            ModelAccess, llm=gateways.llm, key_variable=core.settings.provided.key_hint
        ),
    )
    stored = providers.Factory(
        StoredSessions, uow=storage.uow, registry=core.registry, leasing=leasing
    )
    load_session = providers.Factory(
        LoadSession,
        stored=stored,
        sink=clients.channels,
        catalog=core.catalog,
        open_with=open_with,
        tasks=clients.tasks,
    )
    list_sessions = providers.Factory(ListSessions, uow=storage.uow, worktrees=worktrees)
    resume_session = providers.Factory(
        ResumeSession, stored=stored, catalog=core.catalog, open_with=open_with
    )
    fork_session = providers.Factory(
        ForkSession,
        uow=storage.uow,
        stored=stored,
        registry=core.registry,
        ids=core.ids,
        clock=core.clock,
        catalog=core.catalog,
        open_with=open_with,
        worktrees=worktrees,
    )
    rename_session = providers.Factory(
        RenameSession,
        uow=storage.uow,
        stored=stored,
        registry=core.registry,
        sink=clients.channels,
        clock=core.clock,
    )
    disk_files = providers.Singleton(DiskFiles)
    file_checkpoints = providers.Factory(
        FileCheckpoints,
        uow=storage.uow,
        files=disk_files,
        notices=clients.notices,
        max_bytes=core.settings.provided.checkpoint_max_bytes,
        scanner=providers.Singleton(
            SnapshotScanner, max_bytes=core.settings.provided.checkpoint_max_bytes
        ),
    )
    rewind_session = providers.Factory(
        RewindSession,
        uow=storage.uow,
        registry=core.registry,
        sink=clients.channels,
        restorer=providers.Factory(FileRestorer, uow=storage.uow, files=disk_files),
        permission=providers.Factory(
            RestorePermission,
            asker=clients.permissions,
            uow=storage.uow,
            clock=core.clock,
            catalog=core.catalog,
            timeout=core.settings.provided.permission_timeout,
        ),
    )
    delete_session = providers.Factory(
        DeleteSession,
        uow=storage.uow,
        registry=core.registry,
        clock=core.clock,
        tasks=clients.tasks,
        worktrees=worktrees,
    )
    set_mode = providers.Factory(SetMode, registry=core.registry, settings=change_settings)
    set_config_option = providers.Factory(
        SetConfigOption, registry=core.registry, settings=change_settings
    )
    cancel = providers.Factory(
        CancelTurn, registry=core.registry, leasing=leasing, children=gateways.subagent_runs
    )
    steer = providers.Factory(SteerSession, registry=core.registry, sink=clients.channels)
    queue = providers.Factory(
        QueuePrompts,
        registry=core.registry,
        sink=clients.channels,
        max_waiting=core.settings.provided.prompt_queue_max,
    )
    tell = providers.Factory(TellSession, sink=clients.channels, ids=core.ids)
