"""The named sub-agents a project defines, as the `agent` tool offers them to the model.

Without named agents the tool is offered exactly as before (the built-in researcher only);
with them, its description lists each by name and description and its input takes an
optional `agent` name (the default stays the researcher)."""

from collections.abc import Mapping

from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from domain.knowledge import AgentProfile

DEFAULT_AGENT = "researcher"  # the built-in read-only one
AGENT = "agent"


def agent_tool(base: ToolDefinition, agents: tuple[AgentProfile, ...]) -> ToolDefinition:
    """The `agent` tool offering these named agents besides the researcher."""
    if not agents:
        return base
    listed = "\n".join(
        f"- {agent.name}: {agent.description} (tools: {', '.join(agent.tools)})" for agent in agents
    )
    description = (
        f"{base.description}\n\nBy default the sub-agent is the read-only "
        f"`{DEFAULT_AGENT}`. Name another in `agent` when its description fits the task:"
        f"\n{listed}"
    )
    properties = dict(_properties(base))
    properties[AGENT] = {
        "type": "string",
        "enum": [DEFAULT_AGENT, *(agent.name for agent in agents)],
        "description": f"Which sub-agent runs the task (default: {DEFAULT_AGENT}).",
    }
    schema = {**base.input_schema, "properties": properties}
    return ToolDefinition(name=base.name, description=description, input_schema=schema)


def chosen_agent(
    arguments: Mapping[str, object], agents: tuple[AgentProfile, ...]
) -> AgentProfile | str | None:
    """The named agent a call asks for; None: the researcher; a string: why neither."""
    name = arguments.get(AGENT)
    if name is None or name == DEFAULT_AGENT:
        return None
    found = next((agent for agent in agents if agent.name == name), None)
    if found is not None:
        return found
    names = ", ".join([DEFAULT_AGENT, *(agent.name for agent in agents)])
    return f"There is no sub-agent named {name!r}; the agents are: {names}."


class NamedAgentTools(ToolRunner):
    """Offers the `agent` tool with this turn's named agents; calls go to `inner`."""

    def __init__(self, inner: ToolRunner, agents: tuple[AgentProfile, ...]) -> None:
        self._inner = inner
        self._agents = agents

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        return tuple(
            agent_tool(tool, self._agents) if tool.name == AGENT else tool
            for tool in self._inner.definitions(names)
        )

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        return await self._inner.plan(name, arguments, context)

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        return await self._inner.run(name, arguments, context, progress)


def _properties(tool: ToolDefinition) -> Mapping[str, object]:
    properties = tool.input_schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}
