"""The tools of one open session: the built-in ones and its MCP servers' tools."""

from collections.abc import Mapping

from application.ports.mcp import McpServers, McpTool
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from domain.mcp import is_mcp_name


class SessionTools(ToolRunner):
    """Routes `mcp__…` names to the session's MCP servers, everything else to `inner`.
    Built per use from the open session, so one session's servers never reach another."""

    def __init__(self, inner: ToolRunner, servers: McpServers | None) -> None:
        self._inner = inner
        self._servers = servers

    def _mcp_tools(self) -> dict[str, McpTool]:
        tools = self._servers.tools() if self._servers is not None else ()
        return {tool.definition.name: tool for tool in tools}

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        inner = self._inner.definitions(names)
        if names is not None:
            return inner
        return (*inner, *(tool.definition for tool in self._mcp_tools().values()))

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        if not is_mcp_name(name):
            return await self._inner.plan(name, arguments, context)
        tool = self._mcp_tools().get(name)
        if tool is None:
            return ToolPlan(
                problem=f"There is no tool named {name!r}: its MCP server is not connected "
                "to this session (any more)."
            )
        return ToolPlan(title=tool.title)

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        if not is_mcp_name(name):
            return await self._inner.run(name, arguments, context, progress)
        if self._servers is None:
            return ToolResult(text=f"There is no tool named {name!r}.", is_error=True)
        return await self._servers.call_tool(name, arguments, call_id=context.call_id)
