from dataclasses import dataclass, field

from domain.content import ToolResultBlock
from domain.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one call came to: the result the model gets, and what the tool's own model
    requests used (a sub-agent's), which the turn pays for too."""

    result: ToolResultBlock
    spent: Usage = field(default_factory=Usage)
