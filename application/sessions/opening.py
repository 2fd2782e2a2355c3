from application.dto import SessionOpening
from application.errors import SessionBusy
from application.history.saving import save_setting
from application.ports.unit_of_work import UnitOfWork
from application.runtime.registry import ActiveSession, SessionRegistry
from domain.session import Session


class OpenWith:
    """Gives an opened session what its client opened it with: the extra directories
    (stored with it), the MCP servers (stored without secrets; connected once the client
    has the answer, see SessionServers) and the client's system prompt (stored with it; a
    client that gives none leaves the stored one in place)."""

    def __init__(self, *, uow: UnitOfWork, registry: SessionRegistry) -> None:
        self._uow = uow
        self._registry = registry

    async def apply(self, session: Session, opening: SessionOpening, *, stored: bool) -> None:
        """`stored`: the session is already in the store, and a change is saved now.

        Raises SessionBusy when a running turn would see its directories, servers or system
        prompt change under it (reopening it with the same ones, as a reconnecting client
        does, is fine)."""
        active = self._registry.find(session.id)
        if active is not None and active.busy and self._changes(active, session, opening):
            raise SessionBusy(
                "The session is running a prompt: its directories, MCP servers and system "
                "prompt can change once it has answered (cancel it or wait).",
                sessionId=session.id,
            )
        servers = tuple(server.stored() for server in opening.mcp_servers)

        def change(session: Session) -> bool:
            changed = session.open_with(opening.additional_directories, servers)
            if opening.system_prompt is not None:
                changed = session.set_system_prompt(opening.system_prompt) or changed
            return changed

        if stored:
            await save_setting(self._uow, session, change)
        else:
            change(session)  # stored with the session by whoever stores it
        if active is not None:
            active.mcp_wanted = opening.mcp_servers

    @staticmethod
    def _changes(active: ActiveSession, session: Session, opening: SessionOpening) -> bool:
        servers = active.mcp_wanted if active.mcp_wanted is not None else active.mcp_specs
        prompt = opening.system_prompt
        return (session.additional_directories, servers) != (
            opening.additional_directories,
            opening.mcp_servers,
        ) or (prompt is not None and prompt != session.system_prompt)
