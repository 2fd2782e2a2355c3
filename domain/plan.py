"""The agent's plan for multi-step work: the whole list, as the model last wrote it."""

from dataclasses import dataclass
from enum import StrEnum


class PlanStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class PlanPriority(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEntry:
    content: str
    status: PlanStatus = PlanStatus.PENDING
    priority: PlanPriority = PlanPriority.MEDIUM
