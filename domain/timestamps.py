"""When a session was made and last changed."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Timestamps:
    """Both moments carry a time zone: they are compared across processes and stored as
    UTC. (No order between them is enforced: imported histories come with their own.)"""

    created_at: datetime
    updated_at: datetime

    def __post_init__(self) -> None:
        if self.created_at.tzinfo is None or self.updated_at.tzinfo is None:
            raise ValueError("a session's moments need a time zone")

    @classmethod
    def starting(cls, at: datetime) -> "Timestamps":
        return cls(created_at=at, updated_at=at)

    def touched(self, at: datetime) -> "Timestamps":
        """Changed at `at`: updated_at never goes back."""
        if at <= self.updated_at:
            return self
        return Timestamps(created_at=self.created_at, updated_at=at)
