"""One MCP server of a session: a task that owns its connection from start to stop.

The SDK runs on anyio, whose `async with` must be entered and left by the same task: so each
connection has one owner task holding the client open until it is told to stop or the server
goes away. Calls are made from other tasks (the turn's), which anyio allows.
"""

import asyncio
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from mcp import Client
from mcp_types import Implementation

from adapters.mcp.catalogue import Catalogue, list_catalogue
from adapters.mcp.elicitation import ServerElicitations
from adapters.mcp.failures import describe
from adapters.mcp.scrubbing import Scrubber
from adapters.mcp.transports import Clues, transport
from application.ports.mcp import McpElicitations
from domain.mcp import McpServerSpec, McpServerState, McpStatus, McpTransport

logger = logging.getLogger(__name__)

CLIENT_INFO = Implementation(name="iac-code", version="0.1.0")


class Connection:
    def __init__(
        self,
        spec: McpServerSpec,
        *,
        cwd: str,
        connect_timeout: float,
        report: Callable[[McpServerState], None],
        elicitations: McpElicitations | None = None,
    ) -> None:
        self.spec = spec
        self.scrub = Scrubber.of(spec)
        self.catalogue = Catalogue()  # of the last connection that came up
        self.client: Client | None = None  # while connected
        self.restarts_left = 1 if spec.transport is McpTransport.STDIO else 0
        self._cwd = cwd
        self._timeout = connect_timeout
        self._report = report
        self._state = McpServerState(name=spec.name, status=McpStatus.CONNECTING)
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()  # connected or failed
        self._wake = asyncio.Event()  # told to stop, or the server went away
        self._stopping = False
        self.lost_reason: str | None = None
        self._was_connected = False
        self.call_id: str | None = None  # the session's tool call this server is running
        self._elicitations = (
            None if elicitations is None else ServerElicitations(elicitations, self._call)
        )

    def _call(self) -> str | None:
        return self.call_id

    async def call_returned(self) -> None:
        if self._elicitations is not None:
            await self._elicitations.call_returned()

    @property
    def state(self) -> McpServerState:
        return self._state

    @property
    def crashed(self) -> bool:
        """It was up and went away by itself (as opposed to never coming up)."""
        return self._state.status is McpStatus.FAILED and self._was_connected

    def start(self) -> None:
        self._settled = asyncio.Event()
        self._wake = asyncio.Event()
        self.lost_reason = None
        self._set(McpServerState(name=self.spec.name, status=McpStatus.CONNECTING))
        self._task = asyncio.create_task(self._own(), name=f"mcp server {self.spec.name}")

    async def settled(self) -> None:
        await self._settled.wait()

    async def restart(self) -> bool:
        """Start a crashed stdio server again, once; whether it came back."""
        if not self.crashed or self.restarts_left <= 0 or self._stopping:
            return False
        self.restarts_left -= 1
        if self._task is not None:
            await asyncio.wait([self._task])  # the old connection is fully released first
        logger.info("MCP server %r: starting it again after it stopped", self.spec.name)
        self.start()
        await self.settled()
        return self._state.status is McpStatus.CONNECTED

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await asyncio.wait([self._task])

    def cancel(self) -> None:
        """The last resort of a stop that took too long."""
        if self._task is not None:
            self._task.cancel()

    def lost(self, reason: str) -> None:
        if self.lost_reason is None:
            self.lost_reason = reason
            self._wake.set()

    async def _own(self) -> None:
        clues = Clues()
        try:
            await self._connection(clues)
        except Exception as error:  # any failure of this server is this server's alone
            self._fail(self.lost_reason or describe(error, self.spec, self._timeout, clues), clues)
        except asyncio.CancelledError:
            self._fail("stopped while connecting", clues)
            raise
        finally:
            self.client = None
            self._settled.set()

    async def _connection(self, clues: Clues) -> None:
        stack = AsyncExitStack()
        try:
            async with asyncio.timeout(self._timeout):
                streams = transport(
                    self.spec,
                    cwd=self._cwd,
                    timeout=self._timeout,
                    clues=clues,
                    on_lost=self.lost,
                )
                client = self._client(streams)
                await stack.enter_async_context(client)
                capabilities = client.server_capabilities
                self.catalogue = await list_catalogue(
                    self.spec.name, client, has_prompts=capabilities.prompts is not None
                )
            self.client = client
            self._was_connected = True
            self._set(
                McpServerState(
                    name=self.spec.name,
                    status=McpStatus.CONNECTED,
                    tools=len(self.catalogue.tools),
                    prompts=len(self.catalogue.prompts),
                )
            )
            self._settled.set()
            await self._wake.wait()
            self.client = None
        finally:
            await stack.aclose()
        if self.lost_reason is not None and not self._stopping:
            self._fail(self.lost_reason, clues)

    def _client(self, streams: Any) -> Client:
        """The SDK's client; one that may elicit advertises it to the server (the SDK
        does when given the callback)."""
        asking = self._elicitations
        if asking is None:
            return Client(streams, cache=None, client_info=CLIENT_INFO)
        return Client(
            streams,
            cache=None,
            client_info=CLIENT_INFO,
            elicitation_callback=asking.elicit,
            message_handler=asking.message,
        )

    def _fail(self, reason: str, clues: Clues) -> None:
        if self._stopping and self._state.status is McpStatus.CONNECTED:
            return  # an ordinary stop, not a failure
        tail = clues.text()
        message = self.scrub(f"{reason}: {tail}" if tail else reason)
        logger.warning("MCP server %r failed: %s", self.spec.name, message)
        self._set(McpServerState(name=self.spec.name, status=McpStatus.FAILED, error=message))

    def _set(self, state: McpServerState) -> None:
        if state != self._state or state.status is McpStatus.CONNECTING:
            self._state = state
            self._report(state)
