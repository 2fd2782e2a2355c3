"""The database (units of work, turn leases, the journal's and connections' tables) and
this machine's replica lock files."""

import operator

from dependency_injector import containers, providers
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.persistence.engine import backend, make_engine
from adapters.persistence.journal_store import (
    SqlAlchemyConnectionRecords,
    SqlAlchemyUpdateJournalStore,
)
from adapters.persistence.leases import SqlAlchemyTurnLeases
from adapters.persistence.sqlite import read_only  # an execution option: PostgreSQL ignores it
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from adapters.presence import LockFilePresence


def is_postgresql(url: str) -> bool:
    return backend(url) == "postgresql"


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
    journal_store = providers.Singleton(SqlAlchemyUpdateJournalStore, engine, reader=reader)
    connection_records = providers.Singleton(
        SqlAlchemyConnectionRecords, engine, now=core.now, reader=reader
    )
