"""How a protocol version's face renders what the channels deliver: the core numbers,
journals and fans out a session's updates, never knowing their shape. Handed in by the face
(adapters.acp_v1.rendering for v1)."""

from abc import abstractmethod
from typing import Any, Protocol

from domain.events import AgentEvent


class UpdateRendering(Protocol):
    # The notification method updates go out as (`session/update` in v1).
    method: str

    @abstractmethod
    def notification(self, session_id: str, event: AgentEvent) -> dict[str, Any]:
        """The notification's params for `event`: built once for every client of the
        session (numbered and journaled as they are). On the streaming path."""

    @abstractmethod
    def for_client(self, params: dict[str, Any], capabilities: Any) -> dict[str, Any] | None:
        """`params` as a client with these `clientCapabilities` (as it sent them) is sent
        them; None: not at all. On the streaming path, once per client."""

    @abstractmethod
    def state_only(self, session_id: str) -> dict[str, Any]:
        """The params of an update that changes nothing: what carries the turn state (in
        `_meta`) to a client that is sent nothing else."""
