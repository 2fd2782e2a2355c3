"""The sub-agents running in this process, by child session id: so that a client may cancel
one child alone (ACP `session/cancel` naming the child), which its parent allows."""

from collections.abc import Callable
from dataclasses import dataclass

from domain.ids import SessionId


@dataclass(frozen=True, slots=True, kw_only=True)
class _Run:
    parent_id: SessionId
    stop: Callable[[], None]


class SubagentRuns:
    def __init__(self) -> None:
        self._runs: dict[str, _Run] = {}

    def started(self, child_id: SessionId, parent_id: SessionId, stop: Callable[[], None]) -> None:
        self._runs[child_id] = _Run(parent_id=parent_id, stop=stop)

    def ended(self, child_id: SessionId) -> None:
        self._runs.pop(child_id, None)

    def parent_of(self, session_id: str) -> SessionId | None:
        """The running child's parent; None: not a running child here."""
        run = self._runs.get(session_id)
        return run.parent_id if run is not None else None

    def cancel(self, child_id: str) -> bool:
        """Stop the child's work (its parent goes on); False: no such child runs here."""
        run = self._runs.get(child_id)
        if run is None:
            return False
        run.stop()
        return True
