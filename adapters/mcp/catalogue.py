"""A server's tools and prompts, listed (every page) and named as the session offers them."""

import logging
from dataclasses import dataclass, field
from typing import Protocol

from mcp_types import ListPromptsResult, ListToolsResult, Prompt, Tool

from application.ports.mcp import McpPrompt, McpPromptArgument, McpTool
from application.ports.tools import ToolDefinition
from domain.mcp import qualified_name

logger = logging.getLogger(__name__)

PAGE_LIMIT = 100  # a server whose cursor never ends cannot hang the connection


class Lister(Protocol):
    async def list_tools(self, *, cursor: str | None = None) -> ListToolsResult: ...
    async def list_prompts(self, *, cursor: str | None = None) -> ListPromptsResult: ...


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Qualified name -> (what is offered, the name the server knows it by)."""

    tools: dict[str, tuple[McpTool, str]] = field(default_factory=dict)
    prompts: dict[str, tuple[McpPrompt, str]] = field(default_factory=dict)


async def list_catalogue(server: str, lister: Lister, *, has_prompts: bool) -> Catalogue:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(PAGE_LIMIT):
        page = await lister.list_tools(cursor=cursor)
        tools += page.tools
        if not (cursor := page.next_cursor):
            break
    prompts: list[Prompt] = []
    cursor = None
    for _ in range(PAGE_LIMIT if has_prompts else 0):
        prompt_page = await lister.list_prompts(cursor=cursor)
        prompts += prompt_page.prompts
        if not (cursor := prompt_page.next_cursor):
            break
    return catalogue(server, tools, prompts)


def catalogue(server: str, tools: list[Tool], prompts: list[Prompt]) -> Catalogue:
    result = Catalogue()
    for tool in tools:
        name = qualified_name(server, tool.name)
        if name in result.tools:
            _collision(server, "tool", tool.name, result.tools[name][1], name)
            continue
        title = tool_title(tool)
        definition = ToolDefinition(
            name=name, description=tool.description or title, input_schema=tool.input_schema
        )
        result.tools[name] = (McpTool(definition=definition, server=server, title=title), tool.name)
    for prompt in prompts:
        name = qualified_name(server, prompt.name)
        if name in result.prompts:
            _collision(server, "prompt", prompt.name, result.prompts[name][1], name)
            continue
        result.prompts[name] = (_prompt(server, name, prompt), prompt.name)
    return result


def tool_title(tool: Tool) -> str:
    """The tool's title, its annotations' title, its description's first line, its name."""
    if tool.title:
        return tool.title
    if tool.annotations is not None and tool.annotations.title:
        return tool.annotations.title
    first_line = (tool.description or "").strip().split("\n", 1)[0].strip()
    return first_line or tool.name


def _prompt(server: str, name: str, prompt: Prompt) -> McpPrompt:
    arguments = tuple(
        McpPromptArgument(
            name=argument.name,
            description=argument.description or "",
            required=bool(argument.required),
        )
        for argument in prompt.arguments or ()
    )
    return McpPrompt(
        name=name,
        server=server,
        description=prompt.description or prompt.title or prompt.name,
        arguments=arguments,
    )


def _collision(server: str, kind: str, dropped: str, kept: str, name: str) -> None:
    logger.warning(
        "MCP server %r: %s %r is named %s like %r once sanitised; only %r is offered",
        server, kind, dropped, name, kept, kept,
    )  # fmt: skip
