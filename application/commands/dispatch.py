"""Which built-in slash command a prompt calls, and running it instead of the model."""

from dataclasses import dataclass

from application.commands.run import RunCommand
from application.dto import PromptResult
from application.mcp.session_servers import SessionServers
from application.runtime.command_registry import CommandRegistry
from application.runtime.registry import ActiveSession
from application.runtime.turn_control import TurnControl
from domain.commands import CommandCall, Invocation
from domain.content import UserInputBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltInCommands:
    """The registry a prompt's invocation is read against, and how a call of it runs."""

    registry: CommandRegistry
    runner: RunCommand
    servers: SessionServers  # the session's MCP prompts are offered too

    def call_in(self, invocation: Invocation | None) -> CommandCall | None:
        return invocation.call(self.registry.names) if invocation is not None else None

    async def run(
        self,
        active: ActiveSession,
        control: TurnControl,
        call: CommandCall,
        content: tuple[UserInputBlock, ...],
    ) -> PromptResult:
        """The command's turn; /help lists every command the session offers."""
        offered = self.servers.offered(active)
        return await self.runner.execute(active.session, control, call, content, offered)
