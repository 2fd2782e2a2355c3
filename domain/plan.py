"""The agent's plan for multi-step work: the whole list, as the model last wrote it.

The model writes its plan with the `todo_write` tool, always as the complete list; the
plan stored for a session is nothing but the input of its last successful call, so a
history alone says what the current plan is (`current_plan`)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from domain.content import ToolResultBlock, ToolUseBlock
from domain.errors import DomainError
from domain.message import Message, MessageKind

TODO_WRITE = "todo_write"


class PlanStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class PlanPriority(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEntry:
    content: str
    status: PlanStatus = PlanStatus.PENDING
    priority: PlanPriority = PlanPriority.MEDIUM


class InvalidPlan(DomainError):
    default_message = "Invalid plan."


E = TypeVar("E", bound=StrEnum)


def _choice(
    enum: type[E], item: Mapping[str, object], key: str, where: str, problems: list[str]
) -> E | None:
    value = item.get(key)
    allowed = [e.value for e in enum]
    if isinstance(value, str) and value in allowed:
        return enum(value)
    got = "missing" if value is None else f"not {value!r:.40}"
    problems.append(f"{where}.{key} must be one of {', '.join(allowed)} ({got})")
    return None


def _entry(item: object, where: str, problems: list[str]) -> PlanEntry | None:
    if not isinstance(item, Mapping):
        problems.append(f"{where} must be an object {{content, status, priority?}}")
        return None
    content = item.get("content")
    text = content.strip() if isinstance(content, str) else ""
    if not text:
        problems.append(f"{where}.content must be a non-empty string")
    status = _choice(PlanStatus, item, "status", where, problems)
    priority: PlanPriority | None = PlanPriority.MEDIUM  # a missing (or null) priority
    if item.get("priority") is not None:
        priority = _choice(PlanPriority, item, "priority", where, problems)
    if not text or status is None or priority is None:
        return None
    return PlanEntry(content=text, status=status, priority=priority)


def read_plan(arguments: Mapping[str, object]) -> tuple[PlanEntry, ...]:
    """The plan in a todo_write input. Raises InvalidPlan naming every problem, so that the
    model can fix them all at once. An empty list is a plan too: it clears the plan."""
    todos = arguments.get("todos")
    if not isinstance(todos, list):
        raise InvalidPlan(
            "todo_write needs `todos`: the complete list (an array) of tasks, each "
            "{content, status, priority?}.",
            field="todos",
        )
    problems: list[str] = []
    entries = [_entry(item, f"todos[{i}]", problems) for i, item in enumerate(todos)]
    if problems:
        raise InvalidPlan("Invalid plan: " + "; ".join(problems) + ".", problems=problems)
    return tuple(e for e in entries if e is not None)


def written_plan(use: ToolUseBlock, result: ToolResultBlock | None) -> tuple[PlanEntry, ...] | None:
    """The plan a tool use set: None unless it is a todo_write with a valid input that was
    answered without an error (a refused, cancelled or interrupted call set nothing)."""
    if use.name != TODO_WRITE or result is None or result.is_error:
        return None
    try:
        return read_plan(use.input)
    except InvalidPlan:
        return None


def current_plan(messages: Sequence[Message]) -> tuple[PlanEntry, ...]:
    """The session's plan: what its last successful todo_write wrote, or none once a later
    /clear marker started the conversation again. Compaction keeps the plan."""
    plan: tuple[PlanEntry, ...] = ()
    for index, message in enumerate(messages):
        if message.kind is MessageKind.CLEAR:
            plan = ()
        if not message.is_chat or not message.tool_uses:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        results = {r.tool_use_id: r for r in following.tool_results} if following else {}
        for use in message.tool_uses:
            if (written := written_plan(use, results.get(use.id))) is not None:
                plan = written
    return plan


def progress(entries: Sequence[PlanEntry]) -> str:
    """How far the plan is, e.g. "2 of 5 done (1 in progress, 2 pending)"."""
    counts = {status: sum(e.status is status for e in entries) for status in PlanStatus}
    done = counts[PlanStatus.COMPLETED]
    rest = [
        f"{counts[status]} {status.value.replace('_', ' ')}"
        for status in (PlanStatus.IN_PROGRESS, PlanStatus.PENDING)
        if counts[status]
    ]
    return f"{done} of {len(entries)} done" + (f" ({', '.join(rest)})" if rest else "")
