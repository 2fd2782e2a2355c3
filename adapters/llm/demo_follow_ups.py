"""What the demo model says once a tool has answered: what the result shows, or that the
user declined (DENIED: the permission answer the tool phase gives)."""

import re
from collections.abc import Callable, Sequence

from adapters.llm.demo_steps import Step, clip, count, lower_first
from domain.content import ToolResultBlock, ToolUseBlock
from domain.message import Message, Role
from domain.questions import ASK_USER
from domain.tools import EXIT_PLAN_MODE, title_for

DENIED = "Permission denied."  # the tool phase's answer when the user rejects a call


def _follow_list(use: ToolUseBlock, result: str) -> str:
    entries = [line for line in result.splitlines() if not line.startswith("[...")]
    where = use.input.get("path") or "."
    if entries == ["(empty directory)"]:
        return f"`{where}` is empty."
    shown = ", ".join(f"`{e}`" for e in entries[:8])
    more = f" and {len(entries) - 8} more" if len(entries) > 8 else ""
    return f"`{where}` holds {count(len(entries), 'entry', 'entries')}: {shown}{more}."


def _follow_read(use: ToolUseBlock, result: str) -> str:
    path = use.input.get("path")
    if result == "(empty file)":
        return f"`{path}` is empty."
    lines = [line.partition("\t")[2] for line in result.splitlines() if "\t" in line]
    first = next((line.strip() for line in lines if line.strip()), "")
    return f"I read {count(len(lines), 'line', 'lines')} of `{path}`. It begins: “{clip(first)}”."


def _follow_grep(use: ToolUseBlock, result: str) -> str:
    if result == "No matches.":
        return "I found no matches."
    rows = [line for line in result.splitlines() if not line.startswith("[...")]
    listed = "\n".join(f"- {clip(row)}" for row in rows[:5])
    return f"I found {count(len(rows), 'matching line', 'matching lines')}:\n{listed}"


def _follow_bash(use: ToolUseBlock, result: str) -> str:
    body, ran, status = result.rpartition("\n\n")  # output, blank line, exit status
    if not ran:
        return f"The command did not run: {clip(result)}"
    lines = body.splitlines()
    # Verbatim inside the block (columns, indentation, runs of spaces), only very long lines
    # cut; the fence is longer than any run of backticks in the output, so none closes it.
    shown = "\n".join(line if len(line) <= 200 else line[:199] + "…" for line in lines[:10])
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", shown)), default=0))
    more = f"\n({len(lines) - 10} more lines)" if len(lines) > 10 else ""
    return f"The command finished. {status}\n{fence}\n{shown}\n{fence}{more}"


def _follow_fetch(use: ToolUseBlock, result: str) -> str:
    return (
        f"I fetched {use.input.get('url')}: {len(result)} characters. It begins: “{clip(result)}”."
    )


def _follow_change(use: ToolUseBlock, result: str) -> str:
    return f"Done. {result}"


def _follow_ask(use: ToolUseBlock, result: str) -> str:
    if result.startswith("The user answered"):
        answer = result.removeprefix("The user answered").lstrip(":").strip()
        return f"Thanks: you answered {answer}."
    if result.startswith("The user declined"):
        return "You declined to answer, so I'll go on without it."
    return "You dismissed the question; ask me again whenever you like."


def _follow_plan(use: ToolUseBlock, result: str) -> str:
    if result.startswith("The user approved"):
        return (
            "The plan is approved and the session has left plan mode. Ask me for each step "
            "(write, edit, run), and I'll carry it out."
        )
    return "We stay in plan mode: tell me what to change in the plan."


_FOLLOW_UPS: dict[str, Callable[[ToolUseBlock, str], str]] = {
    "list_files": _follow_list,
    "read_file": _follow_read,
    "grep": _follow_grep,
    "bash": _follow_bash,
    "web_fetch": _follow_fetch,
    "write_file": _follow_change,
    "edit_file": _follow_change,
    EXIT_PLAN_MODE: _follow_plan,
    ASK_USER: _follow_ask,
}


def _describe(use: ToolUseBlock | None, result: ToolResultBlock) -> str:
    if use is None:
        return f"The tool answered: “{clip(result.content)}”."
    action = lower_first(title_for(use.name, use.input))
    if result.content == DENIED:
        return (
            f"Understood: you declined, so I did not {action}, and nothing was changed. "
            "Tell me if you would like something else."
        )
    if result.content.startswith(DENIED):  # a timeout, or a client that could not ask
        return f"I did not {action}, and nothing was changed. {clip(result.content, 200)}"
    if result.is_error and use.name != "bash":  # bash reports its exit code either way
        return f"I could not {action}: {clip(result.content)}"
    return _FOLLOW_UPS.get(use.name, _follow_change)(use, result.content)


def after_tools(messages: Sequence[Message]) -> Step:
    asked = messages[-2] if len(messages) > 1 and messages[-2].role is Role.ASSISTANT else None
    uses = {u.id: u for u in asked.tool_uses} if asked else {}
    results = messages[-1].tool_results
    if any(r.content.startswith(DENIED[:-1]) for r in results):
        thinking = "The user declined the permission request. I won't retry; I'll say so."
    else:
        lines = count(sum(len(r.content.splitlines()) for r in results), "line", "lines")
        thinking = f"The result is back ({lines}). I'll tell the user what it shows."
    return Step(
        thinking=thinking,
        text="\n\n".join(_describe(uses.get(r.tool_use_id), r) for r in results),
    )
