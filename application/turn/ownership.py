"""What a turn does first and last when several processes share the store."""

from application.runtime.registry import ActiveSession
from application.runtime.turn_control import TurnControl
from application.sessions.load_session import StoredSessions
from application.sessions.turn_lease import HeldLease, TurnLeasing


class TurnOwnership:
    """Take the session's lease, then bring its copy up to date (another process may have
    run turns of it since): the turn then starts from what is stored. The caller releases
    the lease when the turn ends."""

    def __init__(self, *, leasing: TurnLeasing, stored: StoredSessions) -> None:
        self._leasing = leasing
        self._stored = stored

    async def begin(self, active: ActiveSession, control: TurnControl) -> HeldLease:
        lease = await self._leasing.hold(active.session.id, control)
        try:
            await self._stored.refresh(active, own_turn=True)
        except BaseException:
            await lease.release()
            raise
        return lease
