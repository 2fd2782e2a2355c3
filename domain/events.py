"""What the agent tells the client while it works. Transports map these to their wire format."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from domain.commands import CommandSpec
from domain.config import SelectOption
from domain.content import ContentBlock
from domain.ids import MessageId, SessionId, ToolCallId
from domain.mcp import McpServerState
from domain.plan import PlanEntry
from domain.tasks import TaskSummary
from domain.tool_call import ToolCallStatus, ToolKind, ToolOutput
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    message_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta:
    message_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """Agent text that is not model output, e.g. why the provider failed."""

    message_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UserContentReplayed:
    message_id: MessageId
    block: ContentBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionTitleChanged:
    title: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    """A tool call shown for the first time; `arguments` None: its input is still coming
    (an update brings it). `name` is the tool's stable name as the model calls it (`bash`,
    `mcp__github__create_issue`), for clients that tell tools apart by more than kind."""

    tool_call_id: ToolCallId
    title: str
    kind: ToolKind
    arguments: Mapping[str, object] | None
    locations: tuple[str, ...] = ()
    status: ToolCallStatus = ToolCallStatus.PENDING
    name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallUpdated:
    """A change of a shown tool call; each field given replaces what was shown (`output`
    the content, `arguments` the raw input)."""

    tool_call_id: ToolCallId
    status: ToolCallStatus | None = None
    title: str | None = None
    locations: tuple[str, ...] | None = None
    arguments: Mapping[str, object] | None = None
    output: tuple[ToolOutput, ...] | None = None
    raw_output: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeChanged:
    mode_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigOptionsChanged:
    """The session's whole option list, after any of its values changed."""

    options: tuple[SelectOption, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageUpdated:
    """How full the model's context is (`used` of `size` tokens) and what the session cost
    so far (None: the model has no known price)."""

    used: int
    size: int
    cost: float | None = None
    currency: str = "USD"


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandsAvailable:
    """The session's whole list of slash commands."""

    commands: tuple[CommandSpec, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanUpdated:
    """The agent's whole plan; an empty one clears what the client shows."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServersChanged:
    """How each of the session's MCP servers is doing, after any of them changed."""

    servers: tuple[McpServerState, ...]


class NoticeSeverity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionNotice:
    """Live news for the user that is not history: never stored, never replayed.

    Shown as an ACP `notice` to a client that advertised `session.notices`; a client that
    did not gets `fallback` (agent text, as before notices existed) or nothing (None).
    `meta` is ours (`_meta.iac_code` of the notice): e.g. a retry's countdown."""

    severity: NoticeSeverity
    title: str
    description: str | None = None
    meta: Mapping[str, object] = field(default_factory=dict)
    fallback: Notice | None = None

    def __post_init__(self) -> None:
        if not self.title.strip():
            raise ValueError("a notice needs a title")


class CompactionStatus(StrEnum):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"  # the summary request failed: nothing changed
    CANCELLED = "cancelled"  # the turn was cancelled while it summarised: nothing changed


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionChanged:
    """A compaction started or ended. `compaction_id` names it from start to end (and is
    its marker's message id once it completed). The counts are the context meter's:
    `tokens_before` the estimate that asked for it, `tokens_after` the compacted context's,
    both of a `window`-token context (None: not known)."""

    compaction_id: MessageId
    status: CompactionStatus
    tokens_before: int
    tokens_after: int | None = None
    window: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSummaryDelta:
    """The next piece of a compaction's summary, as the model writes it."""

    compaction_id: MessageId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TasksChanged:
    """The session's whole list of background tasks, after any of them started or ended."""

    tasks: tuple[TaskSummary, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringWaiting:
    """How many steering messages wait for the running turn's next safe point, after the
    count changed: every client sees that its message (or another's) is on its way."""

    waiting: int


@dataclass(frozen=True, slots=True, kw_only=True)
class QueuedPromptShown:
    """One prompt waiting behind the running turn, as clients are shown it."""

    id: str
    preview: str  # its first words
    queued_by: str  # the client that sent it, as it named itself


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptQueueChanged:
    """The session's whole queue, oldest first, after it changed (empty: nothing waits)."""

    entries: tuple[QueuedPromptShown, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRewound:
    """The session's history was cut back to just before the prompt `to_message_id`
    (`undone`: a rewind was undone and the cut messages came back): a client's transcript
    from that message on is no longer the session's. `message_count`: the history's length
    now."""

    to_message_id: MessageId
    message_count: int
    undone: bool = False


class SubagentState(StrEnum):
    """Where a sub-agent's run is (the ACP `subagent_update` state says it)."""

    RUNNING = "running"
    DONE = "done"  # it answered
    FAILED = "failed"  # its model failed, or it ran out of requests
    CANCELLED = "cancelled"
    WAITING = "waiting"  # for the user's permission for one of its calls


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentChanged:
    """A sub-agent (a child session of this one, `child_id`) was started or its state
    changed. The first one for a child announces it, before any of its traffic. `usage`
    and `error` say how a finished run went; `tool_call_id` is the parent's call that
    started it."""

    child_id: SessionId
    state: SubagentState
    tool_call_id: ToolCallId
    title: str | None = None
    description: str | None = None
    agent: str | None = None
    usage: Usage | None = None
    error: str | None = None
    cancellable: bool = False  # a client may cancel this child alone (while it runs)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionMessageSent:
    """A message from one session to another (the parent's task to its child, the
    child's answer to its parent), shown in the transcript of the session it is emitted
    on."""

    message_id: MessageId
    sender: SessionId
    recipient: SessionId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildEvent:
    """An event of a child session (a sub-agent's text or tool call), emitted on its
    parent: it reaches the parent's clients that show sub-agents, addressed to the child."""

    child_id: SessionId
    event: "AgentEvent"


AgentEvent = (
    TextDelta
    | ThinkingDelta
    | Notice
    | UserContentReplayed
    | SessionTitleChanged
    | ToolCallStarted
    | ToolCallUpdated
    | ModeChanged
    | ConfigOptionsChanged
    | UsageUpdated
    | CommandsAvailable
    | PlanUpdated
    | McpServersChanged
    | SessionNotice
    | CompactionChanged
    | CompactionSummaryDelta
    | TasksChanged
    | SteeringWaiting
    | PromptQueueChanged
    | SessionRewound
    | SubagentChanged
    | SessionMessageSent
    | ChildEvent
)
