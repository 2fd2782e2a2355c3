"""/agents: the sub-agents the `agent` tool offers in this session's project."""

from application.knowledge.named_agents import DEFAULT_AGENT
from application.ports.knowledge import ProjectKnowledge
from application.runtime.command_registry import CommandInput
from domain.commands import CommandSpec
from domain.tools import READ_ONLY_TOOLS

RESEARCHER_LINE = (
    f"- `{DEFAULT_AGENT}` (built in, the default): researches a question, reading only "
    f"(tools: {', '.join(READ_ONLY_TOOLS)})"
)


class AgentsCommand:
    spec = CommandSpec(name="agents", description="List the sub-agents the agent can start")

    def __init__(self, *, knowledge: ProjectKnowledge) -> None:
        self._knowledge = knowledge

    async def run(self, command: CommandInput) -> str:
        agents = await self._knowledge.agents(command.session.cwd)  # read afresh
        lines = ["Sub-agents:", RESEARCHER_LINE]
        for agent in agents:
            extras = "".join(
                f", {label} {value}"
                for label, value in (("model", agent.model), ("mode", agent.mode))
                if value
            )
            lines.append(
                f"- `{agent.name}`: {agent.description} "
                f"(tools: {', '.join(agent.tools)}{extras}; {agent.path})"
            )
        if not agents:
            lines.append(
                "Define your own in `.iac-code/agents/<name>.md` (front matter: description, "
                "tools, optional model and mode; the body is its system prompt)."
            )
        return "\n".join(lines)
