"""An open session's MCP servers: connected after the session is opened, reported to the
client as they change, offered as tools and (their prompts) as slash commands."""

import re
from collections.abc import Awaitable, Callable, Mapping

from application.mcp.elicitations import SessionElicitations
from application.ports.elicitation import Elicitor
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.mcp import McpConnector, McpPrompt, McpServers, StateChanged
from application.runtime.command_registry import CommandRegistry
from application.runtime.registry import ActiveSession
from domain.commands import CommandCall, CommandSpec, Invocation
from domain.events import (
    CommandsAvailable,
    McpServersChanged,
    Notice,
    NoticeSeverity,
    SessionNotice,
)
from domain.mcp import McpServerState, McpStatus

# The commands a session's project offers (see Briefer.offered), given the names taken.
ProjectCommands = Callable[[ActiveSession, frozenset[str]], tuple[CommandSpec, ...]]


def command_spec(prompt: McpPrompt) -> CommandSpec:
    hint = " ".join(a.name if a.required else f"[{a.name}]" for a in prompt.arguments)
    return CommandSpec(
        name=prompt.name,
        description=prompt.description or f"Prompt from the MCP server {prompt.server!r}",
        hint=hint or None,
    )


# A word: a quoted one ('…' or "…", maybe after `name=`) that ends where a word ends, else
# anything up to whitespace. Quotes inside a word (don't) and backslashes (C:\src) are
# characters: the user typed prose and paths, not shell.
_WORD = re.compile(r"""(?:[^\s"'=]+=)?(["'])(.*?)\1(?=\s|$)|\S+""", re.DOTALL)


def _words(text: str) -> list[tuple[str, int, int]]:
    """The words of `text`, unquoted, each with where it was typed."""
    words = []
    for match in _WORD.finditer(text):
        word = match.group()
        if match.group(1):  # quoted: drop the quotes, keep a `name=` before them
            word = word[: word.index(match.group(1))] + match.group(2)
        words.append((word, match.start(), match.end()))
    return words


def prompt_arguments(prompt: McpPrompt, argument: str) -> dict[str, str]:
    """A prompt's arguments from what the user typed after its name: `name=value` words
    for any argument, other words in the order the prompt declares them; the last declared
    one takes whatever is left, as it was typed."""
    declared = [a.name for a in prompt.arguments]
    named: dict[str, str] = {}
    positional: list[tuple[str, int, int]] = []
    for word, start, end in _words(argument):
        key, eq, value = word.partition("=")
        if eq and key in declared:
            named[key] = value
        else:
            positional.append((word, start, end))
    free = [name for name in declared if name not in named]
    for index, name in enumerate(free):
        if index >= len(positional):
            break
        if name != free[-1]:
            named[name] = positional[index][0]
            continue
        rest = positional[index:]
        typed = argument[rest[0][1] : rest[-1][2]]
        contiguous = len(_words(typed)) == len(rest)  # no named word among them
        named[name] = (
            rest[0][0] if len(rest) == 1 else typed if contiguous else " ".join(w for w, *_ in rest)
        )
    return named


class SessionServers:
    """Connects and reports the MCP servers of open sessions.

    - `connect` opens what the last session/new, load, resume or fork asked for (nothing
      when it asked for the same servers again); the servers it replaces are closed.
    - The connector is only made when a session has servers: the MCP SDK is slow to import,
      and the factory given loads it without holding up the event loop.
    - Every change of a server's state is sent as a `session_info_update` whose `_meta`
      lists each server's status; a server that fails is also announced once as agent
      text; the session's command list follows its servers' prompts.
    - With an elicitor, the servers may ask the user for input (SessionElicitations).
    """

    def __init__(
        self,
        *,
        connector: Callable[[], Awaitable[McpConnector]],
        commands: CommandRegistry,
        sink: EventSink,
        ids: IdGenerator,
        project_commands: ProjectCommands,
        elicitor: Elicitor,
        elicitation_timeout: float = 300.0,
    ) -> None:
        self._project_commands = project_commands
        self._connector = connector
        self._commands = commands
        self._sink = sink
        self._ids = ids
        self._elicitor = elicitor
        self._elicitation_timeout = elicitation_timeout

    async def connect(self, active: ActiveSession) -> None:
        wanted = active.mcp_wanted
        if wanted is None:
            return
        if wanted == active.mcp_specs and active.mcp is not None:
            active.mcp_wanted = None
            await self._report(active, active.mcp)  # a client reopening it learns their state
            return
        connector = await self._connector() if wanted else None
        if active.mcp_wanted is not wanted or active.closing:
            return  # another call took it meanwhile, or a newer open asked for others
        # Taken and opened with nothing awaited between: a concurrent call (a prompt) that
        # returns having found nothing to take finds the servers opened.
        active.mcp_wanted = None
        old = active.mcp
        active.mcp_specs, active.mcp, active.mcp_notified = wanted, None, set()
        if connector is not None:
            owner: list[McpServers] = []
            active.mcp = connector.open(
                wanted,
                cwd=active.session.cwd,
                on_change=self._listener(active, owner),
                elicitations=self._elicitations(active),
            )
            owner.append(active.mcp)
        if old is not None:
            await old.aclose()
        if active.mcp is not None and not active.closing:  # closed while the old ones stopped
            await self._report(active, active.mcp)

    def _elicitations(self, active: ActiveSession) -> SessionElicitations:
        return SessionElicitations(
            elicitor=self._elicitor, active=active, timeout=self._elicitation_timeout
        )

    def _listener(self, active: ActiveSession, owner: list[McpServers]) -> StateChanged:
        """Reports the changes of the set `owner` holds (once opened). A set that was
        replaced still reports while it stops (a server still connecting fails then): that
        is no longer the session's news, and a failure told for it would use up the notice
        of a new server with the same name."""

        down: set[str] = set()  # failed since they last connected: a connect is a restart

        async def changed(state: McpServerState) -> None:
            servers = active.mcp
            if servers is None or active.closing or not owner or owner[0] is not servers:
                return
            await self._report(active, servers)
            if state.status is McpStatus.FAILED:
                down.add(state.name)
                await self._sink.emit(active.session.id, self._failed(active, state))
            if state.status is McpStatus.CONNECTED and state.name in down:
                down.discard(state.name)
                await self._sink.emit(active.session.id, _running_again(state))
            if state.status is McpStatus.CONNECTED and state.prompts:
                await self._sink.emit(
                    active.session.id, CommandsAvailable(commands=self.offered(active))
                )

        return changed

    def _failed(self, active: ActiveSession, state: McpServerState) -> SessionNotice:
        """An error notice at each failure; the agent text of a client without notices
        only at a server's first (as before notices: told once)."""
        reason = state.error or "unknown error"
        fallback = None
        if state.name not in active.mcp_notified:
            active.mcp_notified.add(state.name)
            text = f"MCP server '{state.name}' failed: {reason}\n"
            fallback = Notice(message_id=self._ids.message_id(), text=text)
        return SessionNotice(
            severity=NoticeSeverity.ERROR,
            title=f"MCP server '{state.name}' failed",
            description=reason,
            meta=_server_meta(state),
            fallback=fallback,
        )

    async def _report(self, active: ActiveSession, servers: McpServers) -> None:
        await self._sink.emit(active.session.id, McpServersChanged(servers=servers.states()))

    def offered(self, active: ActiveSession) -> tuple[CommandSpec, ...]:
        """Every slash command the session offers: the built-in ones, its MCP prompts, then
        the project's own (/init, skills), which never hide one of the others."""
        fixed = (*self._commands.specs(), *(command_spec(p) for p in self.prompts(active)))
        return (*fixed, *self._project_commands(active, frozenset(s.name for s in fixed)))

    def offered_for(self, active: ActiveSession | None) -> tuple[CommandSpec, ...]:
        """What `offered` gives an open session; the built-in commands alone for one that
        is not open (closed meanwhile)."""
        return self.offered(active) if active is not None else self._commands.specs()

    @staticmethod
    def prompts(active: ActiveSession) -> tuple[McpPrompt, ...]:
        return active.mcp.prompts() if active.mcp is not None else ()

    def prompt_call(
        self, active: ActiveSession, invocation: Invocation
    ) -> tuple[McpPrompt, CommandCall] | None:
        """The MCP prompt the prompt calls (`/mcp__server__prompt …`), if any."""
        prompts = {p.name: p for p in self.prompts(active)}
        call = invocation.call(prompts.keys())
        return (prompts[call.name], call) if call else None

    @staticmethod
    async def expand(active: ActiveSession, prompt: McpPrompt, call: CommandCall) -> str:
        """The prompt's text as its server gives it. Raises McpPromptError."""
        assert active.mcp is not None, "a prompt is only offered by a connected server"
        arguments: Mapping[str, str] = prompt_arguments(prompt, call.argument)
        return await active.mcp.get_prompt(prompt.name, arguments)


def _server_meta(state: McpServerState) -> dict[str, object]:
    return {"mcpServer": {"name": state.name, "status": state.status.value}}


def _running_again(state: McpServerState) -> SessionNotice:
    """A server that failed and came back (a crashed one started again): news for a client
    with notices only (nothing was told of it before notices)."""
    return SessionNotice(
        severity=NoticeSeverity.INFO,
        title=f"MCP server '{state.name}' is running again",
        meta=_server_meta(state),
    )
