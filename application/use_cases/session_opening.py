from application.dto import SessionOpening
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry
from domain.session import Session


class OpenWith:
    """Gives an opened session what its client opened it with: the extra directories
    (stored with it) and the MCP servers (stored without secrets; connected once the client
    has the answer, see SessionServers)."""

    def __init__(self, *, uow: UnitOfWork, registry: SessionRegistry) -> None:
        self._uow = uow
        self._registry = registry

    async def apply(self, session: Session, opening: SessionOpening, *, stored: bool) -> None:
        """`stored`: the session is already in the store, and a change is saved now."""
        changed = session.open_with(
            opening.additional_directories,
            tuple(server.stored() for server in opening.mcp_servers),
        )
        if changed and stored:
            async with self._uow as uow:
                await uow.sessions.save_settings(session)
                await uow.commit()
        active = self._registry.find(session.id)
        if active is not None:
            active.mcp_wanted = opening.mcp_servers
