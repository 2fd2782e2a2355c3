"""One sub-agent run as its parent's clients see it."""

from dataclasses import dataclass, field

from application.history.subagent_record import subagent_record
from application.knowledge.named_agents import DEFAULT_AGENT
from application.ports.tools import Progress, Report
from domain.events import (
    AgentEvent,
    ChildEvent,
    SessionMessageSent,
    SubagentChanged,
    SubagentState,
)
from domain.ids import MessageId, SessionId, ToolCallId
from domain.knowledge import AgentProfile
from domain.tools import READ_ONLY_TOOLS
from domain.usage import Usage


def first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(slots=True, kw_only=True)
class ChildRun:
    """A child session announced on the parent (`SubagentChanged`: running, waiting for
    the user, its end with what it used), its own traffic addressed to it (`ChildEvent`),
    its answer in the parent's transcript; and, for clients that do not show sub-agents,
    progress lines in the parent's tool call, also kept for its result."""

    agent: AgentProfile | None  # None: the built-in researcher
    child_id: SessionId
    parent_id: SessionId
    call_id: ToolCallId
    report: Report
    progress: Progress
    title: str | None = None
    description: str | None = None
    stopped_alone: bool = False  # a client cancelled this child (not its parent)
    lines: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.agent.name if self.agent is not None else DEFAULT_AGENT

    @property
    def tools(self) -> tuple[str, ...]:
        return self.agent.tools if self.agent is not None else READ_ONLY_TOOLS

    async def line(self, text: str) -> None:
        self.lines.append(text)
        await self.progress(text)

    async def announce(self, label: str | None, prompt: str) -> None:
        self.title = label or first_line(prompt)
        self.description = first_line(prompt, 200)
        await self.report(
            SubagentChanged(
                child_id=self.child_id,
                state=SubagentState.RUNNING,
                tool_call_id=self.call_id,
                title=self.title,
                description=self.description,
                agent=self.name,
                cancellable=True,
            )
        )
        await self.line(f"Sub-agent {self.child_id} started: {self.title}\n")

    async def state(self, state: SubagentState) -> None:
        """A state while it runs (waiting for the user, running again)."""
        await self.report(
            SubagentChanged(
                child_id=self.child_id, state=state, tool_call_id=self.call_id, cancellable=True
            )
        )

    async def tell_child(self, event: AgentEvent) -> None:
        await self.report(ChildEvent(child_id=self.child_id, event=event))

    async def answer(self, message_id: MessageId, text: str) -> None:
        """The child's answer, in the parent's transcript."""
        await self.report(
            SessionMessageSent(
                message_id=message_id, sender=self.child_id, recipient=self.parent_id, text=text
            )
        )

    def record(
        self, state: SubagentState, used: Usage, answer_id: MessageId | None
    ) -> dict[str, object]:
        return subagent_record(
            child_id=self.child_id,
            title=self.title,
            description=self.description,
            agent=self.name,
            state=state,
            used=used,
            answer_id=answer_id,
        )

    async def end(self, state: SubagentState, used: Usage, *, error: str | None = None) -> None:
        await self.report(
            SubagentChanged(
                child_id=self.child_id,
                state=state,
                tool_call_id=self.call_id,
                usage=used,
                error=error,
            )
        )
        await self.line(f"Sub-agent {state.value} ({used.total_tokens} tokens).\n")
