"""Builds the real model client on first need, so its heavy SDK import stays off the path
to the first answers. Startup warms it in the background right after the protocol is ready."""

import asyncio
import threading
from collections.abc import AsyncIterator, Callable

from application.ports.llm import LLMClient, ModelEvent, ModelRequest


class DeferredLLMClient(LLMClient):
    def __init__(self, *, factory: Callable[[], LLMClient], has_credentials: bool) -> None:
        self._factory = factory
        self._has_credentials = has_credentials
        self._client: LLMClient | None = None
        self._lock = threading.Lock()

    def has_credentials(self) -> bool:
        return self._has_credentials

    def resolve(self) -> LLMClient:
        """Build the client (thread-safe, once). Call from a worker thread: it may be slow."""
        with self._lock:
            if self._client is None:
                self._client = self._factory()
            return self._client

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # Once built, the client's own stream is handed out: a generator in between would
        # cost a step per streamed delta. `is None`, not `or`: a Protocol instance is not
        # known to be truthy.
        if self._client is not None:
            return self._client.stream(request)
        return self._resolved_stream(request)

    async def _resolved_stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        client = await asyncio.to_thread(self.resolve)
        async for event in client.stream(request):
            yield event
