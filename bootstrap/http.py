"""`iac-code acp --transport http`: the HTTP + SSE transport on uvicorn."""

import asyncio
import gc
import ipaddress
import logging
import socket
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from adapters.acp_v1.handshake import initialize_answer
from adapters.acp_v1.methods import CANCELLED_BY
from adapters.http.app import create_app
from adapters.http.config import HttpConfig
from adapters.http.health import ReadinessCheck
from adapters.http.host_guard import LOOPBACK_NAMES, hostname
from adapters.http.log_redaction import redact_uvicorn_logs
from adapters.http.revival import Revival, RevivalSource
from adapters.http.slow_clients import uvicorn_options
from adapters.http.websocket_protocol import websocket_options
from adapters.protocol.connection import Dispatcher
from adapters.protocol.lazy import LazyDispatcher
from bootstrap.confinement import build_confinement
from bootstrap.early import early_answers
from bootstrap.environment import environment
from bootstrap.heavy_imports import Settling, import_start_modules, loading_in_the_background
from bootstrap.http_settings import load_http_config
from bootstrap.listen import CannotListen, listening_sockets
from bootstrap.offered_models import make_initialize
from bootstrap.settings import Settings, SettingsError
from bootstrap.sign_in_link import announcement, link_host, shows_token, sign_in_choice
from bootstrap.start_failure import start_failure
from bootstrap.tracing import flush_traces, traced
from bootstrap.version import package_version
from domain.sandbox import SandboxLevel

log = logging.getLogger(__name__)


def build_agent(settings: Settings, opened_ahead: Settling | None = None) -> tuple[Dispatcher, Any]:
    """Migrate the database and wire the container; returns (dispatcher, container).
    `opened_ahead`: the early list's connection (bootstrap/early.py), waited for first."""
    with loading_in_the_background():
        # FastAPI is loaded already: its hooks are free.
        import_start_modules(settings.database_url, web_hooks=True, opened_ahead=opened_ahead)
        from bootstrap.container import migrated_container

        container = migrated_container(settings, package_version())
        return container.agent(), container


def database_ready(database_url: str) -> ReadinessCheck:
    """Ready when the database answers and holds the newest schema (SQLite or PostgreSQL)."""

    async def check() -> bool:
        from adapters.persistence.readiness import at_schema_head

        return await at_schema_head(database_url)

    return check


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str, config: HttpConfig) -> None:
    if config.token or is_loopback(host):
        return
    line = "!" * 78
    print(
        f"{line}\n"
        f"WARNING: serving ACP on {host}, reachable from other machines, WITHOUT A TOKEN.\n"
        "Anyone who can reach this port can run the agent with your credentials.\n"
        "Set IACCODE_ACP_HTTP_TOKEN to require `Authorization: Bearer <token>`.\n"
        f"{line}",
        file=sys.stderr,
        flush=True,
    )


def agent_ready(agent: "asyncio.Future[Dispatcher]", database: ReadinessCheck) -> ReadinessCheck:
    """Ready once the agent has loaded (the probe waits for it, within its timeout) and
    the database check passes; never when the agent failed to start."""

    async def check() -> bool:
        await asyncio.shield(agent)
        return await database()

    return check


async def _load_agent(
    settings: Settings,
    agent: "asyncio.Future[Dispatcher]",
    containers: list[Any],
    opened_ahead: Settling,
) -> None:
    """Runs while the server already listens: requests other than `initialize` wait for it."""
    try:
        dispatcher, container = await asyncio.to_thread(build_agent, settings, opened_ahead)
        containers.append(container)
        await _start_cluster(container)
        # Before any prompt: an import during the first prompts would stall every stream.
        await asyncio.to_thread(_warm_model, container)
    except Exception as exc:
        log.error("the agent failed to start: %s", exc, exc_info=True)
        agent.set_exception(start_failure(exc))  # a store it could not open: told as such
        agent.exception()  # told in the log: not "never retrieved" too if nothing waited
        raise
    # Everything loaded so far lives as long as the process: keep it out of the collector's
    # sight, or full collections walking it stall every stream for 100+ ms under load.
    gc.freeze()
    agent.set_result(dispatcher)


def revival_once_loaded(
    agent: "asyncio.Future[Dispatcher]", containers: list[Any]
) -> RevivalSource:
    """Connections of a previous process are taken up once the agent has loaded (a
    request naming one waits for it, as any request but `initialize` does)."""

    async def revival() -> Revival | None:
        try:
            await asyncio.shield(agent)
        except Exception:  # the agent failed to start: nothing to take up
            return None
        return containers[0].revival() if containers else None

    return revival


async def _start_cluster(container: Any) -> None:
    from bootstrap.container import start_cluster  # loaded with the container

    await start_cluster(container)


def _warm_model(container: Any) -> None:
    from bootstrap.container import warm_model

    warm_model(container)


async def serve(
    settings: Settings,
    config: HttpConfig,
    host: str,
    port: int,
    sockets: "list[socket.socket] | None" = None,
    listening: Callable[[], None] | None = None,
) -> None:
    """Listen at once and answer `initialize`; the agent loads meanwhile (as over stdio),
    and /readyz says ready only once it has. `sockets`: bound already (bootstrap.listen);
    `listening`: called once the server accepts connections."""
    version = package_version()
    agent: asyncio.Future[Dispatcher] = asyncio.get_running_loop().create_future()
    containers: list[Any] = []
    ready = agent_ready(agent, database_ready(settings.database_url))
    early = early_answers(settings.database_url)
    dispatcher = traced(
        LazyDispatcher(
            initialize_answer(make_initialize(settings, version)),
            agent,
            early.answers,
            cancelled_by=CANCELLED_BY,
        ),
        settings.traces_exporters,
    )
    app = create_app(dispatcher, config, ready, revival=revival_once_loaded(agent, containers))
    import uvicorn

    redact_uvicorn_logs()  # a token in a URL's query must not reach the log

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit and listening is not None:
                listening()

        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets)
            # Now, not at exit: on SIGTERM uvicorn re-raises the signal once serve() ends,
            # and the process dies of it before any exit hook (or `finally`) runs. So the
            # running turns are stopped here (what they said stored, the journal's last
            # updates written), or a restart would lose what clients were already shown.
            await _release(loading, containers)
            await flush_traces(settings.traces_exporters)

    server = Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_config=None,  # our logging setup (stderr) stays in charge
            access_log=False,  # adapters/http/access_log.py writes structured lines
            lifespan="on",
            server_header=False,
            timeout_graceful_shutdown=5,
            # WebSocket's options replace the HTTP ones' `ws: none`.
            **(uvicorn_options(config.header_timeout_seconds) | websocket_options(config)),
        )
    )
    log.info(
        "iac-code %s starting ACP over HTTP on %s:%d (provider %s, token %s)",
        version,
        host,
        port,
        settings.provider,
        "required" if config.token else "not set",
    )
    loading = asyncio.create_task(_load_agent(settings, agent, containers, early.settled))
    loading.add_done_callback(lambda done: _stop_if_failed(done, server))
    try:
        await server.serve(sockets=sockets)
    finally:
        await _release(loading, containers)  # if serve() ended before its shutdown ran
    if not server.started or _failed(loading):
        raise SystemExit(1)


def _stop_if_failed(loading: "asyncio.Task[None]", server: Any) -> None:
    """A server whose agent cannot start must not stay up half alive."""
    if _failed(loading):
        server.should_exit = True


async def _release(loading: "asyncio.Task[None]", containers: list[Any]) -> None:
    """Once the agent has loaded (or failed to), release what it started, once."""
    await asyncio.gather(loading, return_exceptions=True)
    while containers:
        from bootstrap.container import release  # loaded with the container

        await release(containers.pop())


def _failed(loading: "asyncio.Task[None]") -> bool:
    return loading.done() and not loading.cancelled() and loading.exception() is not None


def main(settings: Settings, host: str, port: int) -> int:
    try:
        # Secrets (the token) are no longer in os.environ: see bootstrap/environment.py.
        config = load_http_config(environment())
        link_choice = sign_in_choice(environment())
    except SettingsError as exc:
        print(f"iac-code: configuration error: {exc}", file=sys.stderr)
        return 2
    config = replace(config, replica_id=settings.replica_id)  # connection ids name it
    warn_if_exposed(host, config)
    if config.allowed_hosts is None and is_loopback(host):
        # Served on loopback: only requests naming a loopback host (no DNS rebinding).
        config = replace(config, allowed_hosts=LOOPBACK_NAMES | {hostname(host)})
    problem = sandbox_problem(settings)
    if problem is not None:
        print(f"iac-code: {problem}", file=sys.stderr)
        return 2
    try:
        sockets = listening_sockets(host, port)
    except CannotListen as exc:
        print(f"iac-code: {exc}", file=sys.stderr)
        return 1
    announce = sign_in_announcer(host, sockets, config, link_choice)
    # A sandbox's allowlist must never lead back here (bootstrap.confinement).
    settings = replace(settings, own_ports=tuple({s.getsockname()[1] for s in sockets}))
    asyncio.run(serve(settings, config, host, port, sockets, listening=announce))
    return 0


def sandbox_problem(settings: Settings) -> str | None:
    """A server others reach must confine the agent's commands, or say plainly it will not:
    without a working sandbox it starts only with IAC_CODE_SANDBOX=off."""
    if settings.sandbox == SandboxLevel.OFF:
        return None
    problem = build_confinement(settings).problem
    if problem is None:
        return None
    return (
        f"this machine cannot sandbox the agent's commands ({problem}). A server reached "
        "over the network must: install bubblewrap, or set IAC_CODE_SANDBOX=off to run "
        "every command with the server's rights (docs/sandbox.md)"
    )


def sign_in_announcer(
    host: str, sockets: "list[socket.socket]", config: HttpConfig, choice: str
) -> Callable[[], None]:
    """What prints the web client's link once the server listens (bootstrap.sign_in_link)."""
    port = sockets[0].getsockname()[1]  # with --port 0, the one the system chose
    base = f"http://{link_host(host, config.allowed_hosts)}:{port}"

    def announce() -> None:
        # print, not logging: the link is for the person at the terminal, not for the log.
        line = announcement(base, config.token, show_token=shows_token(choice, sys.stderr))
        print(line, file=sys.stderr, flush=True)

    return announce
