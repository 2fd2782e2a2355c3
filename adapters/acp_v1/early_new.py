"""`session/new` answered while the agent still loads (bootstrap/early.py): the session is
made as NewSession makes it and stored with the standard library; the agent, once loaded,
takes it over (opens it and attaches the client, as if it had made it) before it serves
anything else, then sends what follows the answer (the session's commands). Only plain
params on a SQLite database at the newest schema are answered early: everything else is
left to the agent, which answers as it always did."""

import logging
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from adapters.acp_v1.plain_new import plain_new_cwd, plain_new_result
from adapters.protocol.connection import Connection, Dispatcher
from adapters.protocol.lazy import Provisional
from application.attachments.ownership import Role
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.sessions.fresh_session import fresh_session
from application.sessions.state import state_of
from domain.config import Catalog
from domain.session import Session

log = logging.getLogger(__name__)


@runtime_checkable
class TakesOver(Protocol):
    """What the loaded agent offers for a session made before it (adapters.acp_v1.agent)."""

    async def take_over(self, peer: Connection, session_id: str, cwd: str) -> None: ...

    async def announce(self, session_id: str) -> None: ...


class EarlyNewSession:
    def __init__(
        self,
        *,
        store: Callable[[Session], bool],
        catalog: Catalog,
        default_model: str,
        ids: IdGenerator,
        clock: Clock,
    ) -> None:
        self._store = store  # False: not stored, the request is left to the agent
        self._catalog = catalog
        self._default_model = default_model
        self._ids = ids
        self._clock = clock

    async def __call__(self, params: dict[str, Any] | None, peer: Connection) -> Any | None:
        cwd = plain_new_cwd(params)
        if cwd is None:
            return None
        session = fresh_session(
            self._ids.session_id(),
            cwd,
            self._clock.now(),
            model=self._default_model,
            catalog=self._catalog,
        )
        if not self._store(session):
            return None
        log.debug("session/new answered before the agent loaded: %s", session.id)
        session_id = session.id

        async def take_over(agent: Dispatcher) -> None:
            await _taking_over(agent).take_over(peer, session_id, cwd)

        async def announce(agent: Dispatcher) -> None:
            await _taking_over(agent).announce(session_id)

        result = plain_new_result(state_of(session, self._catalog), Role.CONTROLLER)
        return Provisional(result, take_over=take_over, then=announce)


def _taking_over(agent: Dispatcher) -> TakesOver:
    if not isinstance(agent, TakesOver):  # wired wrong: said plainly, not as a missing method
        raise TypeError(f"{type(agent).__name__} cannot take over an early session")
    return agent
