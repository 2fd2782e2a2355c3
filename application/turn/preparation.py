"""A prompt made ready for the model: the session's MCP servers up, the turn's briefing
read, and a prompt command replaced by the text it stands for."""

import asyncio
from collections.abc import Awaitable

from application.agent_loop.parts import TurnOutput
from application.agent_loop.prepared import PreparedPrompt
from application.knowledge.briefing import Briefer, PromptCommandFailed
from application.mcp.session_servers import SessionServers
from application.ports.clock import Clock
from application.ports.mcp import McpPromptError
from application.runtime.command_registry import CommandRegistry
from application.runtime.registry import ActiveSession
from application.runtime.turn_control import TurnControl
from application.tasks.background_tasks import BackgroundTasks
from domain.commands import CommandCall, Invocation, unescape
from domain.content import UserInputBlock
from domain.tasks import tasks_context


class _Told(Exception):
    """A prompt command's text could not be made; the user was told why."""


class PromptPreparation:
    """Readies a prompt that calls no built-in command.

    - The session's MCP servers are connected and waited for (each within its connect
      timeout); `/mcp__server__prompt …` becomes the prompt's text as its server gives it.
    - The turn's briefing is read; `/init` and `/<skill> …` become the text they stand for
      (an MCP prompt is never also a project command).
    - `//name …` reaches the model as `/name …` when `name` is a command.
    """

    def __init__(
        self,
        *,
        commands: CommandRegistry,
        output: TurnOutput,
        servers: SessionServers,
        briefer: Briefer,
        tasks: BackgroundTasks,
        clock: Clock,
    ) -> None:
        self._commands = commands
        self._output = output
        self._servers = servers
        self._briefer = briefer
        self._tasks = tasks
        self._clock = clock

    async def prepare(
        self,
        active: ActiveSession,
        control: TurnControl,
        content: tuple[UserInputBlock, ...],
        invocation: Invocation | None,
    ) -> PreparedPrompt | None:
        """None when a prompt command's text could not be made (the user is told why).
        Raises TurnCancelled."""
        try:
            expansion = await self._expansion(active, control, invocation)
        except _Told:
            return None
        names = self._taken(active)
        context = self._context(active)
        if expansion is None:  # as typed
            typed = invocation.unescaped(names) if invocation else content
            return PreparedPrompt(content=typed, context=context)
        assert invocation is not None, "only a prompt command expands"
        # Stored with the words the user typed. Its text is unescaped as theirs would be
        # (as before the split: an MCP prompt's text may start `//name`).
        return PreparedPrompt(
            content=invocation.with_text(unescape(expansion, names)),
            typed=invocation.text,
            context=context,
        )

    def _context(self, active: ActiveSession) -> str | None:
        """The environment, and the session's background tasks, as the turn's prompt
        carries them to the model."""
        environment = Briefer.context(active.briefing)
        tasks = tasks_context(self._tasks.of(active.session.id), self._clock.now())
        return "\n".join(part for part in (environment, tasks) if part) or None

    async def _expansion(
        self, active: ActiveSession, control: TurnControl, invocation: Invocation | None
    ) -> str | None:
        """The text the prompt's command stands for; None when it calls none."""
        expansion = await self._with_servers(active, control, invocation)
        await control.guard(self._briefer.gather(active))
        if expansion is not None:
            return expansion  # an MCP prompt: not also a project command
        return await self._project_command(active, control, invocation)

    async def _with_servers(
        self, active: ActiveSession, control: TurnControl, invocation: Invocation | None
    ) -> str | None:
        """Waits for the session's MCP servers; the text of the MCP prompt called, if any."""
        # The connector may still be loading (the MCP SDK's import): a cancel does not wait
        # for it, and the servers still open, shielded, for the session's next prompt.
        await control.guard(asyncio.shield(self._servers.connect(active)))
        if active.mcp is not None:
            await control.guard(active.mcp.ready())
        found = self._servers.prompt_call(active, invocation) if invocation else None
        if found is None:
            return None
        prompt, call = found
        making = self._servers.expand(active, prompt, call)
        return await self._expanded(active, control, call, making, McpPromptError)

    async def _project_command(
        self, active: ActiveSession, control: TurnControl, invocation: Invocation | None
    ) -> str | None:
        """The text `/init` or `/<skill> …` stands for, if called."""
        taken = self._taken(active)
        call = self._briefer.call_in(active, invocation, taken) if invocation else None
        if call is None:
            return None
        making = self._briefer.expand(active, call)
        return await self._expanded(active, control, call, making, PromptCommandFailed)

    async def _expanded(
        self,
        active: ActiveSession,
        control: TurnControl,
        call: CommandCall,
        making: Awaitable[str],
        failure: type[Exception],
    ) -> str:
        """What a prompt command stands for. Raises _Told (the user told why) when that
        text could not be made."""
        try:
            return await control.guard(making)
        except failure as exc:
            await self._output.tell(active.session.id, f"/{call.name} failed: {exc}")
            raise _Told from exc

    def _taken(self, active: ActiveSession) -> frozenset[str]:
        """The built-in commands' and MCP prompts' names: no skill may hide them."""
        return self._commands.names | {p.name for p in SessionServers.prompts(active)}
