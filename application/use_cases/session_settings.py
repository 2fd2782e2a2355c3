from dataclasses import dataclass

from application.dto import SessionState
from application.ports.clock import Clock
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry
from application.use_cases.session_state import state_of
from domain.config import Catalog


@dataclass(frozen=True, slots=True, kw_only=True)
class SetConfigOptionRequest:
    session_id: str
    option_id: str
    value: object


class SetConfigOption:
    """Change a session option (the model); the next model request uses it.

    - Raises SessionNotFound, UnknownConfigOption or InvalidConfigValue.
    - Allowed while a prompt runs: the request in flight keeps its model.
    """

    def __init__(
        self, *, uow: UnitOfWork, registry: SessionRegistry, clock: Clock, catalog: Catalog
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._clock = clock
        self._catalog = catalog

    async def execute(self, request: SetConfigOptionRequest) -> SessionState:
        session = self._registry.require(request.session_id).session
        model = self._catalog.check_option(request.option_id, request.value)
        session.choose_model(model, at=self._clock.now())
        async with self._uow as uow:
            await uow.sessions.save_settings(session)
            await uow.commit()
        return state_of(session, self._catalog)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetModeRequest:
    session_id: str
    mode_id: str


class SetMode:
    """Switch the session's mode. Raises SessionNotFound or UnknownMode."""

    def __init__(
        self, *, uow: UnitOfWork, registry: SessionRegistry, clock: Clock, catalog: Catalog
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._clock = clock
        self._catalog = catalog

    async def execute(self, request: SetModeRequest) -> None:
        session = self._registry.require(request.session_id).session
        self._catalog.check_mode(request.mode_id)
        session.set_mode(request.mode_id, at=self._clock.now())
        async with self._uow as uow:
            await uow.sessions.save_settings(session)
            await uow.commit()
