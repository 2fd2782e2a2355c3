from dataclasses import dataclass, field
from datetime import datetime

from domain.stop_reason import StopReason
from domain.usage import Usage


@dataclass(slots=True, kw_only=True)
class Turn:
    """One prompt and everything the agent did for it, until a stop reason."""

    started_at: datetime
    max_requests: int
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # None while no request had a known price
    stop_reason: StopReason | None = None
    finished_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.max_requests < 1:
            raise ValueError("a turn must allow at least one model request")

    @property
    def may_request(self) -> bool:
        return self.stop_reason is None and self.requests < self.max_requests

    def record_request(self, usage: Usage, cost: float | None = None) -> None:
        if not self.may_request:
            raise ValueError("no model request is allowed in this turn any more")
        self.requests += 1
        self.add_usage(usage, cost)

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        """Usage that is not one of the turn's own requests (e.g. a compaction's summary)."""
        self.usage = self.usage + usage
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def finish(self, reason: StopReason, *, at: datetime) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            self.finished_at = at
