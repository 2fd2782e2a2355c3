"""The agent's tools as the domain knows them: what kind each is, what it may do unasked,
and how a person reads a call to it."""

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from domain.content import ToolUseBlock
from domain.ids import ToolCallId
from domain.plan import TODO_WRITE, PlanStatus
from domain.questions import ASK_USER
from domain.tool_call import ToolCallRecord, ToolCallStatus, ToolKind, ToolOutput


class Category(StrEnum):
    """What a tool may do, which decides how each mode treats it (domain.permission)."""

    READ = "read"  # reads and searches: run unasked inside the session's cwd
    EDIT = "edit"  # changes files in the project
    EXECUTE = "execute"  # runs commands (and any tool we do not know)
    DELEGATE = "delegate"  # starts a read-only sub-agent
    SWITCH_MODE = "switch_mode"  # asks the user to leave plan mode
    THINK = "think"  # the agent's own notes (its plan), a question: touch nothing, never ask
    TASKS = "tasks"  # read or stop the session's own background tasks: never ask


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    name: str
    kind: ToolKind
    category: Category


EXIT_PLAN_MODE = "exit_plan_mode"
TASK_OUTPUT = "task_output"
TASK_KILL = "task_kill"
BASH = "bash"  # the one tool that runs a command on this machine (sandboxed)
LOAD_SKILL = "load_skill"  # reads a skill's instructions: never asks, in any mode

TOOLS: Mapping[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(name="read_file", kind=ToolKind.READ, category=Category.READ),
        ToolSpec(name="list_files", kind=ToolKind.READ, category=Category.READ),
        ToolSpec(name="glob", kind=ToolKind.SEARCH, category=Category.READ),
        ToolSpec(name="grep", kind=ToolKind.SEARCH, category=Category.READ),
        ToolSpec(name="web_fetch", kind=ToolKind.FETCH, category=Category.READ),
        ToolSpec(name=LOAD_SKILL, kind=ToolKind.READ, category=Category.READ),
        ToolSpec(name="write_file", kind=ToolKind.EDIT, category=Category.EDIT),
        ToolSpec(name="edit_file", kind=ToolKind.EDIT, category=Category.EDIT),
        ToolSpec(name="bash", kind=ToolKind.EXECUTE, category=Category.EXECUTE),
        ToolSpec(name="agent", kind=ToolKind.EXECUTE, category=Category.DELEGATE),
        ToolSpec(name=EXIT_PLAN_MODE, kind=ToolKind.SWITCH_MODE, category=Category.SWITCH_MODE),
        ToolSpec(name=TODO_WRITE, kind=ToolKind.THINK, category=Category.THINK),
        ToolSpec(name=ASK_USER, kind=ToolKind.OTHER, category=Category.THINK),
        ToolSpec(name=TASK_OUTPUT, kind=ToolKind.READ, category=Category.TASKS),
        ToolSpec(name=TASK_KILL, kind=ToolKind.EXECUTE, category=Category.TASKS),
    )
}
READ_ONLY_TOOLS = tuple(name for name, spec in TOOLS.items() if spec.category is Category.READ)
# What a named sub-agent may be given: reads, edits, commands; never another sub-agent.
AGENT_TOOLS = tuple(
    name
    for name, spec in TOOLS.items()
    if spec.category in (Category.READ, Category.EDIT, Category.EXECUTE)
)


def spec_for(name: str) -> ToolSpec:
    """Unknown tools are treated as executing something: they always ask."""
    return TOOLS.get(name) or ToolSpec(name=name, kind=ToolKind.OTHER, category=Category.EXECUTE)


def _short(value: object, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plan_title(todos: object) -> str:
    """Counted from the raw input: a title is shown before the input is checked."""
    if not isinstance(todos, list):
        return "Update plan"
    if not todos:
        return "Clear plan"
    done = sum(isinstance(t, Mapping) and t.get("status") == PlanStatus.COMPLETED for t in todos)
    return f"Update plan ({done}/{len(todos)} done)"


def title_for(name: str, arguments: Mapping[str, object]) -> str:
    """A human title for a tool call, e.g. "Read src/app.py" or "Run `pytest -q`"."""
    path = arguments.get("path")
    match name:
        case "read_file":
            return f"Read {path}"
        case "list_files":
            return f"List {path or '.'}"
        case "glob":
            return f"Find {arguments.get('pattern')}" + (f" in {path}" if path else "")
        case "grep":
            where = f" in {path}" if path else ""
            return f"Search for {_short(arguments.get('pattern'))}{where}"
        case "web_fetch":
            return f"Fetch {_short(arguments.get('url'), 80)}"
        case "write_file":
            return f"Write {path}"
        case "edit_file":
            return f"Edit {path}"
        case "bash":
            verb = "Start" if arguments.get("run_in_background") is True else "Run"
            return f"{verb} `{_short(arguments.get('command'))}`"
        case "task_output":
            return f"Read output of task {_short(arguments.get('id'))}"
        case "task_kill":
            return f"Stop task {_short(arguments.get('id'))}"
        case "exit_plan_mode":
            return "Ready to code?"
        case "todo_write":
            return _plan_title(arguments.get("todos"))
        case "ask_user":
            return f"Ask: {_short(arguments.get('question'), 80)}"
        case "load_skill":
            return f"Load skill {_short(arguments.get('name'))}"
        case "agent":
            return f"Sub-agent: {_short(arguments.get('description') or arguments.get('prompt'))}"
    return f"Use {name}"


def call_record(
    use: ToolUseBlock,
    status: ToolCallStatus,
    *,
    locations: tuple[str, ...] = (),
    output: tuple[ToolOutput, ...] = (),
) -> ToolCallRecord:
    """The record of a call the model asked for, titled and kinded as its tool is."""
    return ToolCallRecord(
        id=ToolCallId(use.id),
        name=use.name,
        title=title_for(use.name, use.input),
        kind=spec_for(use.name).kind,
        arguments=dict(use.input),
        status=status,
        locations=locations,
        output=output,
    )
