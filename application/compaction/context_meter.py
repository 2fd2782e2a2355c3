import json
from collections.abc import Sequence
from dataclasses import dataclass

from application.ports.tools import ToolDefinition
from domain.config import Catalog
from domain.context import CHARS_PER_TOKEN, context_estimate
from domain.events import UsageUpdated
from domain.session import Session
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPolicy:
    """When the context is compacted and how much of it stays verbatim."""

    compact_at: float = 0.85  # of the model's context window
    keep_turns: int = 2  # the last user turns kept verbatim


def overhead(system: str, tools: Sequence[ToolDefinition]) -> int:
    """Tokens a request spends on its system prompt and tool definitions."""
    schemas = json.dumps([[t.name, t.description, dict(t.input_schema)] for t in tools])
    return int((len(system) + len(schemas)) / CHARS_PER_TOKEN)


class ContextMeter:
    """How full a session's context is, against its model's window, and when to compact."""

    def __init__(self, *, catalog: Catalog, policy: CompactionPolicy) -> None:
        self._catalog = catalog
        self.policy = policy

    def window(self, session: Session) -> int:
        return self._catalog.model(session.model).context_window

    def estimate(self, session: Session, *, overhead: int) -> int:
        return context_estimate(session.messages, overhead=overhead)

    def needs_compaction(self, session: Session, used: int, max_tokens: int) -> bool:
        window = self.window(session)
        return used > self.policy.compact_at * window or not self.fits(session, used, max_tokens)

    def fits(self, session: Session, used: int, max_tokens: int) -> bool:
        """The request and its longest answer fit in the window."""
        return used + max_tokens <= self.window(session)

    def keep_budget(self, session: Session) -> int:
        """What a compacted context may keep verbatim: half of what triggers compaction,
        so that work can go on for a while before the next one."""
        return int(self.policy.compact_at * self.window(session) / 2)

    def cost(self, model: str, usage: Usage) -> float | None:
        return self._catalog.model(model).cost(usage)

    def report(self, session: Session, used: int) -> UsageUpdated:
        prices = self._catalog.model(session.model).prices
        return UsageUpdated(
            used=used,
            size=self.window(session),
            cost=session.cost,
            currency=prices.currency if prices else "USD",
        )
