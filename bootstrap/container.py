"""The composition root's life: built over a migrated database, warmed, released. The
wiring is in bootstrap/containers/, one container per role. Importing it loads the heavy
modules: keep it off the path to the `initialize` answer (see bootstrap/stdio.py)."""

import logging

from bootstrap.containers.application import Container
from bootstrap.settings import Settings

__all__ = ["Container", "migrated_container", "release", "start_cluster", "warm_model"]


def migrated_container(settings: Settings, version: str) -> Container:
    """The container over a database at the newest schema (migrated now if needed)."""
    from adapters.persistence.migrate import upgrade_to_head

    if upgrade_to_head(settings.database_url):
        logging.getLogger(__name__).info("database migrated to the newest schema")
    container = Container(settings=settings, version=version)
    container.storage.presence().here()  # before any lease is taken
    # A command added later (e.g. from an MCP server) reaches every open session.
    announce = container.prompting.announce
    container.commands.registry().subscribe(lambda: announce().commands_changed())
    if settings.task_follow_up:  # a background task ending while idle starts a turn
        follow_up = container.prompting.task_follow_up
        container.clients.tasks().follow_up_with(lambda sid, text: follow_up().run(sid, text))
    return container


def warm_model(container: Container) -> None:
    """Import the model SDK now (it takes ~1.3 s and holds the GIL), so that no prompt
    or stream waits for it later."""
    resolve = getattr(container.gateways.llm(), "resolve", None)
    if resolve is not None:
        resolve()


async def start_cluster(container: Container) -> None:
    """Replicas sharing PostgreSQL follow each other's sessions for their own clients,
    route requests to each other's turns and show each other's permission requests
    (adapters/cluster). SQLite's replicas share one machine and no signals: each delivers
    only the turns it runs and routes nothing (docs/deploy.md)."""
    if not _is_cluster(container):
        return
    cluster = container.clients.cluster()
    leasing = container.sessions.leasing()
    await cluster.start(container.agent().apply_routed, leasing.poke)
    leasing.nudge_with(cluster.nudge_cancel)


def _is_cluster(container: Container) -> bool:
    from bootstrap.containers.storage import is_postgresql

    return is_postgresql(container.core.settings().database_url)


async def release(container: Container) -> None:
    """Stop what a container started, in order: sessions (their turns, MCP servers), then
    the journal's last updates, then the database pool. Whatever ends a server or a test's
    container ends it this way, so no write is left running against a closed pool."""
    await container.clients.tasks().end_all()  # background tasks: their process trees
    await container.core.registry().close_all()
    if _is_cluster(container):
        await container.clients.cluster().aclose()  # leaves the registry: no lease to wait out
    await container.clients.journal().aclose()
    await container.storage.signals().close()
    await container.storage.engine().dispose()
