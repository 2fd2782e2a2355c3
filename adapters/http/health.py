"""Liveness and readiness probes: no auth, and they say nothing but ok or not."""

import asyncio
import logging
from collections.abc import Awaitable, Callable

from fastapi import APIRouter
from starlette.responses import JSONResponse

log = logging.getLogger(__name__)

ReadinessCheck = Callable[[], Awaitable[bool]]


def health_router(ready: ReadinessCheck, timeout: float) -> APIRouter:
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @router.get("/readyz")
    async def readyz() -> JSONResponse:
        try:
            ok = await asyncio.wait_for(ready(), timeout)
        except Exception:
            log.exception("readiness check failed")
            ok = False
        if ok:
            return JSONResponse({"status": "ready"})
        # `error`, like every error answer of this server; the reason stays in the log.
        return JSONResponse({"status": "unavailable", "error": "not ready"}, status_code=503)

    return router
