"""One step of the demo model (a thought, a reply, at most one tool call), and the small
wording helpers its script and its follow-ups share."""

from dataclasses import dataclass

from domain.content import ToolUseBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One model response: a thought, a reply, and at most one tool call."""

    thinking: str
    text: str
    tool: ToolUseBlock | None = None


def clip(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
