from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from application.ports.workspace import Workspace
from domain.events import AgentEvent
from domain.knowledge import Briefing
from domain.tool_call import ToolCallRecord, ToolOutput
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """What the model is told about a tool."""

    name: str
    description: str
    input_schema: Mapping[str, object]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPlan:
    """A tool call looked at before it runs: where it reaches and what it would change."""

    locations: tuple[str, ...] = ()  # absolute paths
    outside_cwd: bool = False
    preview: tuple[ToolOutput, ...] = ()  # e.g. the diff a write would make
    problem: str | None = None  # input that cannot work; the call fails without asking
    # Why this call must be asked about whatever the session's rules say (e.g. a fetch of a
    # private network address). Such a call is never covered by "always allow".
    ask_reason: str | None = None
    title: str | None = None  # how the call is shown, when the tool knows better than its name

    @property
    def always_asks(self) -> bool:
        return self.outside_cwd or self.ask_reason is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    text: str  # what the model receives
    is_error: bool = False
    output: tuple[ToolOutput, ...] = ()  # what the user is shown
    raw_output: Mapping[str, object] = field(default_factory=dict)
    # Model requests the tool made itself (a sub-agent's): the turn pays for them too.
    usage: Usage = field(default_factory=Usage)


# Live output as text, or something to show the user at once (e.g. the editor's terminal).
Progress = Callable[[str | ToolOutput], Awaitable[None]]
# An event for the calling session's clients (a sub-agent announcing its child session).
Report = Callable[[AgentEvent], Awaitable[None]]


async def unreported(_: AgentEvent) -> None:
    """Where a tool's events go when nobody is told (a context without a session)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    cwd: str
    model: str  # for tools that call the model themselves (the sub-agent)
    session_id: str = ""  # tools that remember things per session key them by it
    # The session's extra directories (absolute): inside the session like cwd itself.
    roots: tuple[str, ...] = ()
    # What the turn told the model (instructions, environment): a sub-agent is told it too.
    briefing: Briefing = field(default_factory=Briefing)
    # Where files are read and written and commands run: this machine or the editor.
    # None: the runner's own (local) workspace.
    workspace: Workspace | None = None
    call_id: str | None = None  # the tool call being run (None while it is looked at)
    report: Report = unreported  # events for the session's clients
    # Asks the session's permission flow about a sub-agent's call (None: nobody can be
    # asked, so a sub-agent's call that would ask is refused).
    permit: "ChildPermit | None" = None


class ToolRunner(Protocol):
    """Runs the agent's tools for a session working in `cwd`.

    `plan` and `run` of one session are called one at a time, each `run` after the `plan`
    of the same call, except that sub-agents started together run at once (each calling
    the read-only tools it may use). `run` may be cancelled at any await; it then stops
    what it started (processes included). Tool failures are results with is_error, not exceptions.
    """

    @abstractmethod
    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]: ...

    @abstractmethod
    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan: ...

    @abstractmethod
    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildCall:
    """A sub-agent's tool call that its parent session's permission flow decides on: asked
    of the parent's clients, naming the child."""

    call: ToolCallRecord
    plan: ToolPlan
    child_id: str
    agent: str
    mode: str | None = None  # the agent's own mode (its file's `mode`): it may only narrow


# None: the call may run; otherwise why not (what the child's model is told).
ChildPermit = Callable[[ChildCall], Awaitable[str | None]]
