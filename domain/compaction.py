"""The text of a compaction request: the conversation to summarise as a plain transcript.

A transcript rather than the messages themselves: the summary request then needs no tool
definitions, fits any provider, and long tool results can be shortened for it."""

import json
from collections.abc import Sequence

from domain.content import TextBlock, ToolResultBlock, ToolUseBlock, as_model_text
from domain.message import Message, Role

RESULT_CHARS = 2_000  # of each tool result: the summary needs what happened, not all of it
INPUT_CHARS = 500  # of each tool call's input
OMITTED = "[… earlier messages omitted: they did not fit in one summary request …]"

SUMMARY_SYSTEM = (
    "You write the working memory of a coding agent whose conversation grew too long. "
    "The agent will continue from your summary alone, so keep every fact it needs and "
    "drop chatter."
)


def instruction(focus: str | None) -> str:
    text = (
        "Summarise the conversation above for the agent that continues it. Keep: what the "
        "user asked for and every constraint or preference they stated; decisions and why; "
        "files read, created or changed (with paths) and what changed; commands run and "
        "their outcome; errors and how they were solved; the current state of the work and "
        "the next steps. Quote exact names, paths and values. Use short bullet points under "
        "headings. Answer with the summary only."
    )
    if focus:
        text += f"\n\nThe user asks the summary to focus on: {focus}"
    return text


def _short(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text) - limit:,} more characters]"


def _render(message: Message) -> str:
    lines: list[str] = []
    for block in message.content:
        match block:
            case ToolUseBlock(name=name, input=tool_input):
                lines.append(f"[tool call {name} {_short(json.dumps(tool_input), INPUT_CHARS)}]")
            case ToolResultBlock(content=content, is_error=is_error):
                label = "tool error" if is_error else "tool result"
                lines.append(f"[{label}: {_short(content, RESULT_CHARS)}]")
            case _:
                text = as_model_text(block, images=False)
                if isinstance(text, TextBlock) and text.text.strip():
                    lines.append(text.text)
    if not lines:
        return ""
    speaker = "User" if message.role is Role.USER else "Assistant"
    return f"{speaker}:\n" + "\n".join(lines)


def transcript(summary: str | None, messages: Sequence[Message], *, limit_chars: int) -> str:
    """The earlier summary, then the messages, newest kept when all would not fit."""
    parts = [p for p in (_render(m) for m in messages) if p]
    head = f"Summary of the conversation before this part:\n{summary}" if summary else ""
    room = limit_chars - len(head)
    kept: list[str] = []
    for part in reversed(parts):
        room -= len(part) + 2
        if room < 0:
            kept.append(OMITTED)
            break
        kept.append(part)
    return "\n\n".join(([head] if head else []) + list(reversed(kept)))
