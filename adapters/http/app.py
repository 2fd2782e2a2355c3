"""The FastAPI application of the HTTP + SSE transport."""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from fastapi import FastAPI
from starlette.exceptions import HTTPException

from adapters.http.access_log import AccessLog
from adapters.http.config import HttpConfig
from adapters.http.errors import (
    ClientGone,
    HttpError,
    answer_client_gone,
    answer_http_error,
    answer_routing_error,
    answer_unexpected,
)
from adapters.http.health import ReadinessCheck, health_router
from adapters.http.host_guard import HostGuard
from adapters.http.registry import Clock, ConnectionRegistry
from adapters.http.revival import RevivalSource
from adapters.http.routes import acp_router
from adapters.http.web_page import web_page_router
from adapters.http.websocket import websocket_router
from adapters.protocol.connection import Dispatcher


def create_app(
    dispatcher: Dispatcher,
    config: HttpConfig,
    ready: ReadinessCheck,
    clock: Clock = time.monotonic,
    revival: RevivalSource | None = None,
) -> FastAPI:
    """One dispatcher serves every connection: each call names its peer connection.
    `app.state.registry` holds the open connections; `revival` takes up those a previous
    process (or another replica) opened."""
    registry = ConnectionRegistry(dispatcher, config, clock, revival)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        chores = [
            asyncio.create_task(registry.reap_forever()),
            asyncio.create_task(registry.close_all_on_shutdown()),
        ]
        try:
            yield
        finally:
            for chore in chores:
                chore.cancel()
            await asyncio.gather(*chores, return_exceptions=True)
            await registry.close_all("the server is shutting down")

    app = FastAPI(
        title="iac-code ACP over HTTP",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.registry = registry
    app.add_exception_handler(HttpError, answer_http_error)
    app.add_exception_handler(ClientGone, answer_client_gone)
    app.add_exception_handler(HTTPException, answer_routing_error)
    app.add_exception_handler(Exception, answer_unexpected)
    app.include_router(acp_router(registry, config))
    app.include_router(websocket_router(registry, dispatcher, config))
    app.include_router(health_router(ready, config.readiness_timeout_seconds))
    app.include_router(web_page_router())
    app.add_middleware(
        HostGuard, allowed=config.allowed_hosts, allowed_origins=config.allowed_origins
    )
    app.add_middleware(AccessLog)  # outermost: refused requests are logged too
    return app
