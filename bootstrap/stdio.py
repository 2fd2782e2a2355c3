"""`iac-code acp --transport stdio`: answer `initialize` at once, load the rest meanwhile."""

import asyncio
import functools
import gc
import logging
import signal
import sys
import threading
import time
from typing import Any, BinaryIO

from adapters.acp_v1.handshake import initialize_answer
from adapters.acp_v1.methods import ANSWERED_AT_EOF, CANCELLED_BY
from adapters.protocol.connection import Dispatcher
from adapters.protocol.lazy import LazyDispatcher
from adapters.stdio.transport import serve
from adapters.workspace.processes import stop_all_process_groups
from bootstrap.daemon_work import on_daemon_thread
from bootstrap.database_url import shown
from bootstrap.early import early_answers, early_new_session
from bootstrap.heavy_imports import Settling, import_start_modules, loading_in_the_background
from bootstrap.offered_models import make_initialize
from bootstrap.settings import Settings
from bootstrap.start_failure import start_failure
from bootstrap.tracing import traced
from bootstrap.version import package_version

log = logging.getLogger(__name__)


def _build_agent(
    settings: Settings, version: str, opened_ahead: Settling
) -> tuple[Dispatcher, Any]:
    """Runs on a worker thread: imports the heavy modules, migrates, wires the container."""
    started = time.perf_counter()
    with loading_in_the_background():
        import_start_modules(
            settings.database_url, web_hooks=False, opened_ahead=opened_ahead, early_new=True
        )
        from bootstrap.container import migrated_container

        log.debug("heavy modules imported in %.0f ms", (time.perf_counter() - started) * 1000)
        container = migrated_container(settings, version)
        agent = container.agent()
        # What is loaded by now lives as long as the process: out of the collector's sight, or
        # a full collection walking it lands in a request (~40 ms inside a long session's load).
        gc.freeze()
    log.debug("agent ready in %.0f ms", (time.perf_counter() - started) * 1000)
    return agent, container


def _warm_model(container: Any) -> None:
    from bootstrap.container import warm_model

    warm_model(container)
    gc.freeze()  # the model SDK too


async def run(settings: Settings, source: BinaryIO, sink: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    version = package_version()
    initialize = make_initialize(settings, version)
    containers: list[Any] = []
    # First: on PostgreSQL it starts importing asyncpg, which the agent's loader waits for.
    early = early_answers(settings.database_url)

    def start_agent() -> "asyncio.Future[Dispatcher]":
        """Load the agent on a worker thread; again when it failed on its database."""
        agent: asyncio.Future[Dispatcher] = loop.create_future()

        def ready(built: "asyncio.Future[tuple[Dispatcher, Any]]") -> None:
            if built.exception() is not None:
                log.error("the agent failed to start: %s", built.exception())
                agent.set_exception(start_failure(built.exception()))  # type: ignore[arg-type]
                agent.exception()  # told in the log: not "never retrieved" if nothing waited
                return
            dispatcher, container = built.result()
            containers.append(container)
            agent.set_result(dispatcher)
            # The SDK's import holds the GIL for about a second: not while the first
            # requests (a load replaying a long session) are served, but once they are done.
            # (`lazy` is set below, before the loop can run this callback.)
            lazy.when_idle(
                lambda: threading.Thread(
                    target=_warm_model, args=(container,), daemon=True, name="warm-model"
                ).start()
            )

        # On a daemon thread: a client that closes stdin meanwhile does not wait for it.
        building = on_daemon_thread(
            functools.partial(_build_agent, settings, version, early.settled), "agent-load"
        )
        building.add_done_callback(ready)
        return agent

    first = start_agent()
    log.info(
        "iac-code %s serving ACP on stdio (provider %s, database %s)",
        version,
        settings.provider,
        shown(settings.database_url),  # never its password
    )
    stop = _stop_on_signals(loop)
    answers = {**early.answers, **early_new_session(settings)}
    lazy = LazyDispatcher(
        initialize_answer(initialize),
        first,
        answers,
        restart=start_agent,
        cancelled_by=CANCELLED_BY,
        answered_at_eof=ANSWERED_AT_EOF,
    )
    try:
        await serve(
            traced(lazy, settings.traces_exporters),
            source,
            sink,
            max_line=settings.max_message_bytes,
            stop=stop,
        )
    finally:
        # A load still running is not waited for: it ends with the process (bootstrap.
        # daemon_work). What has loaded is released.
        for container in containers:
            from bootstrap.container import release  # loaded with the container

            await release(container)


def _stop_on_signals(loop: asyncio.AbstractEventLoop) -> asyncio.Event:
    """SIGTERM and SIGINT end the server like a closed stdin does: running turns are
    cancelled, so the commands their tools started are stopped before we exit."""
    stop = asyncio.Event()

    def stopping() -> None:
        stop_all_process_groups()  # at once: a command must not finish its side effects
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping)
    return stop


def main(settings: Settings, protocol_out: BinaryIO) -> int:
    asyncio.run(run(settings, sys.stdin.buffer, protocol_out))
    return 0
