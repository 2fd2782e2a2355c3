"""What the server knows about a model: its name, whether it thinks and reads images."""

from dataclasses import dataclass
from enum import StrEnum

from domain.usage import Usage


class ThoughtLevel(StrEnum):
    OFF = "off"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


# Extended-thinking budgets in tokens; the provider's minimum is 1024.
BUDGETS = {
    ThoughtLevel.OFF: 0,
    ThoughtLevel.LOW: 4_000,
    ThoughtLevel.MEDIUM: 12_000,
    ThoughtLevel.HIGH: 32_000,
}
MIN_BUDGET = 1024
LEVEL_NAMES = {
    ThoughtLevel.OFF: "Off",
    ThoughtLevel.LOW: "Low",
    ThoughtLevel.MEDIUM: "Medium",
    ThoughtLevel.HIGH: "High",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingPlan:
    """One request's thinking: its budget (0: off) and the max_tokens that leaves room for it."""

    budget: int
    max_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Prices:
    """What a model costs, in `currency` per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    currency: str = "USD"

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


DEFAULT_CONTEXT_WINDOW = 200_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    id: str
    name: str
    description: str | None = None
    thinking: bool = True  # extended thinking
    images: bool = True  # reads image content
    max_output_tokens: int | None = None
    context_window: int = DEFAULT_CONTEXT_WINDOW  # tokens one request may hold
    tools: bool = True  # calls tools (a model that cannot is offered none)
    # Reasons at an effort the request names (OpenAI-style `reasoning_effort`), rather than
    # with a token budget: the thought level maps to the effort.
    reasoning_effort: bool = False
    prices: Prices | None = None  # unknown: no cost is reported

    def cost(self, usage: Usage) -> float | None:
        return None if self.prices is None else self.prices.cost(usage)

    @property
    def levels(self) -> tuple[ThoughtLevel, ...]:
        return tuple(ThoughtLevel) if self.thinking else (ThoughtLevel.OFF,)

    def effort(self, level: str) -> str | None:
        """The `reasoning_effort` for `level` on a model that takes one; None otherwise."""
        if not (self.thinking and self.reasoning_effort) or level == ThoughtLevel.OFF:
            return None
        return (
            level if level in (ThoughtLevel.LOW, ThoughtLevel.MEDIUM, ThoughtLevel.HIGH) else None
        )

    def thinking_plan(self, level: str, max_tokens: int) -> ThinkingPlan:
        """The budget for `level` on top of the answer's `max_tokens`, within the model's
        output limit; off for a model that cannot think or an unknown level."""
        try:
            wanted = BUDGETS[ThoughtLevel(level)]
        except ValueError:
            wanted = 0
        if not self.thinking or not wanted or self.reasoning_effort:
            return ThinkingPlan(budget=0, max_tokens=max_tokens)
        total = max_tokens + wanted
        if self.max_output_tokens:
            total = min(total, self.max_output_tokens)
        room = total - max_tokens
        budget = min(wanted, room if room >= MIN_BUDGET else total // 2)
        if budget < MIN_BUDGET:
            return ThinkingPlan(budget=0, max_tokens=max_tokens)
        return ThinkingPlan(budget=budget, max_tokens=total)
