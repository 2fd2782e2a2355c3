from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class LegacySession:
    session: Session
    skipped_lines: int  # corrupt or unreadable lines left out
    source: str  # where it came from, for people


class LegacySessionSource(Protocol):
    @abstractmethod
    def sessions(self) -> Iterator[LegacySession]:
        """Every session found; a session that cannot be read at all is skipped and logged."""
