"""What a session's finished turns used and cost, summed."""

from dataclasses import dataclass, field

from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class Totals:
    """Tokens spent and their cost (None: no price was known for any of them)."""

    spent: Usage = field(default_factory=Usage)
    cost: float | None = None

    def __post_init__(self) -> None:
        if self.cost is not None and self.cost < 0:
            raise ValueError("a cost cannot be negative")

    def charged(self, usage: Usage, cost: float | None) -> "Totals":
        """These totals with one more model request counted (its cost if it had a price)."""
        if cost is None:
            return Totals(spent=self.spent + usage, cost=self.cost)
        return Totals(spent=self.spent + usage, cost=(self.cost or 0.0) + cost)


NOTHING_SPENT = Totals()
