"""The `todo_write` tool: the model keeps its plan for multi-step work, which the client
shows as a checklist. It runs in-process: it only reads its input and reports it."""

from collections.abc import Mapping

from application.ports.tools import ToolDefinition, ToolPlan
from domain.plan import (
    TODO_WRITE,
    InvalidPlan,
    PlanEntry,
    PlanPriority,
    PlanStatus,
    progress,
    read_plan,
)

TODO_WRITE_TOOL = ToolDefinition(
    name=TODO_WRITE,
    description=(
        "Keep the plan for the current task; the user sees it as a checklist beside the "
        "conversation. Use it for multi-step work: three or more steps, or several things "
        "asked at once. Skip it for a question or a single small change.\n"
        "- Write the plan before you start, as short imperative tasks.\n"
        "- Keep exactly one task in_progress while you work on it; mark it completed as "
        "soon as it is done, not in batches, then start the next.\n"
        "- Add tasks you discover, drop those that no longer apply.\n"
        "- Every call replaces the whole plan: always send the complete list, completed "
        "tasks included. An empty list clears the plan."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The complete plan, in the order of the work.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {
                            "type": "string",
                            "minLength": 1,
                            "description": "The task, e.g. 'Add tests for the parser'.",
                        },
                        "status": {"type": "string", "enum": [s.value for s in PlanStatus]},
                        "priority": {
                            "type": "string",
                            "enum": [p.value for p in PlanPriority],
                            "description": "How much the task matters; medium if left out.",
                        },
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    },
)


def check_plan(arguments: Mapping[str, object]) -> ToolPlan:
    """A todo_write call looked at before it runs: bad input fails it, never asking."""
    try:
        read_plan(arguments)
    except InvalidPlan as exc:
        return ToolPlan(problem=f"{exc} Send the complete list again, corrected.")
    return ToolPlan()


def plan_written(entries: tuple[PlanEntry, ...]) -> str:
    """What the model is told once its plan is shown."""
    return f"Plan updated: {progress(entries)}." if entries else "Plan cleared."
