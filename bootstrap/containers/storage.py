"""The database (units of work, turn leases, the journal's and connections' tables) and
this machine's replica lock files."""

import operator

from dependency_injector import containers, providers
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.local_signals import LocalSignals
from adapters.persistence.cluster_attachments import SqlAlchemyClusterAttachments
from adapters.persistence.engine import backend, make_engine
from adapters.persistence.journal_store import (
    SqlAlchemyConnectionRecords,
    SqlAlchemyUpdateJournalStore,
)
from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.routed_requests import SqlAlchemyRoutedRequests
from adapters.persistence.sqlite import read_only  # an execution option: PostgreSQL ignores it
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from adapters.presence import LockFilePresence
from application.ports.cluster_signals import ClusterSignals


def is_postgresql(url: str) -> bool:
    return backend(url) == "postgresql"


def cluster_signals(url: str) -> ClusterSignals:
    """LISTEN/NOTIFY between the replicas of a PostgreSQL database; in memory on SQLite,
    whose replicas share one machine and learn of changes from the database alone."""
    if not is_postgresql(url):
        return LocalSignals()
    # Imported here: a SQLite server never loads asyncpg.
    from adapters.persistence.signals import PostgresSignals

    return PostgresSignals(url)


class Storage(containers.DeclarativeContainer):
    core = providers.DependenciesContainer()

    engine = providers.Singleton(make_engine, url=core.settings.provided.database_url)
    reader = providers.Callable(read_only, engine)
    session_factory = providers.Singleton(async_sessionmaker, engine, expire_on_commit=False)
    read_factory = providers.Singleton(async_sessionmaker, reader, expire_on_commit=False)
    uow = providers.Factory(
        SqlAlchemyUnitOfWork,
        session_factory=session_factory,
        read_factory=read_factory,
        tracer=core.tracer,
    )
    # Turn leases: one prompt per session across every replica sharing the database.
    leases = providers.Singleton(
        SqlAlchemyTurnLeases,
        engine,
        reader=reader,
        # PostgreSQL's replicas may run on several machines: their clocks need not agree.
        database_clock=providers.Callable(is_postgresql, core.settings.provided.database_url),
    )
    # This machine's running replicas: a restarted agent takes its sessions back at once.
    presence = providers.Singleton(
        LockFilePresence,
        directory=providers.Callable(
            operator.truediv, core.settings.provided.config_dir, "replicas"
        ),
        replica_id=core.settings.provided.replica_id,
    )
    # How replicas tell each other that something changed (live updates, routed requests).
    signals = providers.Singleton(cluster_signals, url=core.settings.provided.database_url)
    # Requests for the replica running a session's turn, and the permission requests it asks.
    routed_requests = providers.Singleton(
        SqlAlchemyRoutedRequests,
        engine,
        reader=reader,
        database_clock=providers.Callable(is_postgresql, core.settings.provided.database_url),
    )
    journal_store = providers.Singleton(SqlAlchemyUpdateJournalStore, engine, reader=reader)
    connection_records = providers.Singleton(
        SqlAlchemyConnectionRecords, engine, now=core.now, reader=reader
    )
    # Which replica has clients attached to which session, and which replicas live.
    cluster_attachments = providers.Singleton(
        SqlAlchemyClusterAttachments,
        engine,
        reader=reader,
        database_clock=providers.Callable(is_postgresql, core.settings.provided.database_url),
    )
