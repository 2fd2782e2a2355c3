"""The MCP servers of one session, on the official SDK: `McpConnector` and `McpServers`."""

import asyncio
import logging
from collections.abc import Awaitable, Mapping, Sequence
from typing import TypeVar

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from adapters.mcp.connection import Connection
from adapters.mcp.failures import describe
from adapters.mcp.results import error_result, prompt_text, tool_result
from application.ports.mcp import (
    McpElicitations,
    McpPrompt,
    McpPromptError,
    McpServers,
    McpTool,
    StateChanged,
)
from application.ports.tools import ToolResult
from domain.mcp import McpServerSpec, McpServerState, McpStatus

logger = logging.getLogger(__name__)

R = TypeVar("R")  # a server's answer (never a str: a str is why there is none)


class SdkMcpConnector:
    """Opens a session's MCP servers.

    connect_timeout: per server, to connect and list its tools and prompts.
    call_timeout: per tool call or prompt fetch (the turn may cancel sooner).
    close_timeout: for all of a session's servers to stop at aclose().
    """

    def __init__(
        self,
        connect_timeout: float = 10.0,
        *,
        call_timeout: float = 600.0,
        close_timeout: float = 10.0,
    ) -> None:
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._close_timeout = close_timeout

    def open(
        self,
        servers: Sequence[McpServerSpec],
        *,
        cwd: str,
        on_change: StateChanged,
        elicitations: McpElicitations | None = None,
    ) -> "SdkMcpServers":
        opened = SdkMcpServers(
            servers,
            cwd=cwd,
            on_change=on_change,
            elicitations=elicitations,
            connect_timeout=self._connect_timeout,
            call_timeout=self._call_timeout,
            close_timeout=self._close_timeout,
        )
        opened.start()
        return opened


class SdkMcpServers(McpServers):
    def __init__(
        self,
        servers: Sequence[McpServerSpec],
        *,
        cwd: str,
        on_change: StateChanged,
        connect_timeout: float,
        call_timeout: float,
        close_timeout: float,
        elicitations: McpElicitations | None = None,
    ) -> None:
        self._connections = [
            Connection(
                spec,
                cwd=cwd,
                connect_timeout=connect_timeout,
                report=self._changed,
                elicitations=elicitations,
            )
            for spec in _unique(servers)
        ]
        self._on_change = on_change
        self._call_timeout = call_timeout
        self._close_timeout = close_timeout
        # Changes are told in the order they happened, one at a time, by one task.
        self._changes: asyncio.Queue[McpServerState | None] = asyncio.Queue()
        self._reporter: asyncio.Task[None] | None = None
        self._closing: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._reporter = asyncio.create_task(self._report(), name="mcp state changes")
        for connection in self._connections:
            connection.start()

    def states(self) -> tuple[McpServerState, ...]:
        return tuple(connection.state for connection in self._connections)

    async def ready(self) -> None:
        await asyncio.gather(*(connection.settled() for connection in self._connections))

    def tools(self) -> tuple[McpTool, ...]:
        return tuple(
            tool
            for connection in self._offered()
            for tool, _ in connection.catalogue.tools.values()
        )

    def prompts(self) -> tuple[McpPrompt, ...]:
        return tuple(
            prompt
            for connection in self._offered()
            for prompt, _ in connection.catalogue.prompts.values()
        )

    async def call_tool(
        self, name: str, arguments: Mapping[str, object], *, call_id: str | None = None
    ) -> ToolResult:
        connection = next((c for c in self._connections if name in c.catalogue.tools), None)
        if connection is None:
            return error_result("", name, f"There is no MCP tool named {name}.")
        server = connection.spec.name
        problem = await self._usable(connection)
        if problem is None and name not in connection.catalogue.tools:
            problem = f"it no longer offers {name}"
        if problem is not None:
            return error_result(server, name, f"MCP server {server!r} is not available: {problem}")
        tool = connection.catalogue.tools[name][1]
        client = connection.client
        assert client is not None
        connection.call_id = call_id  # a session's tools run one at a time
        try:
            outcome = await self._ask(
                connection, "the tool", client.call_tool(tool, dict(arguments))
            )
        finally:
            connection.call_id = None
        await connection.call_returned()
        if not isinstance(outcome, str):
            return tool_result(server, tool, outcome, connection.scrub)
        text = connection.scrub(f"MCP server {server!r}, tool {tool!r}: {outcome}")
        logger.info("%s", text)
        return error_result(server, tool, text)

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> str:
        connection = next((c for c in self._connections if name in c.catalogue.prompts), None)
        if connection is None:
            raise McpPromptError(f"There is no MCP prompt named {name}.")
        server = connection.spec.name
        if (problem := await self._usable(connection)) is not None:
            raise McpPromptError(f"MCP server {server!r} is not available: {problem}")
        prompt, own_name = connection.catalogue.prompts[name]
        missing = [a.name for a in prompt.arguments if a.required and not arguments.get(a.name)]
        if missing:
            raise McpPromptError(f"/{name} needs: {', '.join(missing)}")
        client = connection.client
        assert client is not None
        outcome = await self._ask(
            connection, "the prompt", client.get_prompt(own_name, dict(arguments))
        )
        if not isinstance(outcome, str):
            return prompt_text(outcome, connection.scrub)
        raise McpPromptError(connection.scrub(f"MCP server {server!r}, /{name}: {outcome}"))

    async def _ask(self, connection: Connection, what: str, request: Awaitable[R]) -> R | str:
        """The server's answer, or why there is none: a broken server fails the call, never
        the turn."""
        try:
            async with asyncio.timeout(self._call_timeout):
                return await request
        except TimeoutError:
            return f"{what} did not answer within {self._call_timeout:g} s"
        except MCPError as error:
            return _call_error(connection, error)
        except Exception as error:
            return describe(error, connection.spec, self._call_timeout)

    async def aclose(self) -> None:
        if self._closing is None:
            self._closing = asyncio.create_task(self._close(), name="mcp close")
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        stops = [asyncio.create_task(c.stop()) for c in self._connections]
        if stops:
            _, late = await asyncio.wait(stops, timeout=self._close_timeout)
            if late:
                logger.warning("%d MCP server(s) did not stop in time", len(late))
                for connection in self._connections:
                    connection.cancel()
                await asyncio.wait(stops, timeout=self._close_timeout)
        self._changes.put_nowait(None)
        if self._reporter is not None:
            await self._reporter

    async def _usable(self, connection: Connection) -> str | None:
        """None when the server can take a call now; else why not."""
        if self._closing is not None:
            return "the session's MCP servers are closed"
        if connection.state.status is McpStatus.CONNECTING:
            await connection.settled()
        if connection.crashed:
            await connection.restart()
        if connection.state.status is McpStatus.CONNECTED and connection.client is not None:
            return None
        return connection.state.error or "it is not connected"

    def _offered(self) -> list[Connection]:
        """Connected servers, and crashed ones that a call would start again: their tools
        stay offered, or the model could never call one and bring the server back."""
        if self._closing is not None:
            return []
        return [
            c
            for c in self._connections
            if c.state.status is McpStatus.CONNECTED or (c.crashed and c.restarts_left > 0)
        ]

    def _changed(self, state: McpServerState) -> None:
        self._changes.put_nowait(state)

    async def _report(self) -> None:
        while (state := await self._changes.get()) is not None:
            try:
                await self._on_change(state)
            except Exception:
                logger.exception("reporting the state of MCP server %r failed", state.name)


def _call_error(connection: Connection, error: MCPError) -> str:
    if error.code == CONNECTION_CLOSED:
        why = connection.lost_reason
        return f"the server stopped during the call ({why})" if why else "the connection closed"
    return f"the server answered with an error: {error.message}"


def _unique(servers: Sequence[McpServerSpec]) -> list[McpServerSpec]:
    """The first server of each name: two with one name could not be told apart."""
    seen: dict[str, McpServerSpec] = {}
    for spec in servers:
        if spec.name in seen:
            logger.warning("MCP server %r is given twice; the first one is used", spec.name)
            continue
        seen[spec.name] = spec
    return list(seen.values())
