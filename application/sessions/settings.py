from dataclasses import dataclass

from application.dto import SessionState
from application.history.saving import save_setting
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.runtime.registry import SessionRegistry
from application.sessions.state import state_of
from domain.config import MODE_OPTION_ID, Catalog
from domain.events import ConfigOptionsChanged, ModeChanged
from domain.session import Session


class ChangeSettings:
    """Change one setting of an open session: store it, then tell the client.

    The mode has two doors (`session/set_mode` and the `mode` config option): both come
    here, so either one sends `current_mode_update` and `config_option_update`. Changes
    apply from the next model request (mode, model) or the next prompt (thought level);
    they are allowed while a prompt runs.
    """

    def __init__(self, *, uow: UnitOfWork, sink: EventSink, clock: Clock, catalog: Catalog) -> None:
        self._uow = uow
        self._sink = sink
        self._clock = clock
        self._catalog = catalog

    async def option(self, session: Session, option_id: str, value: object) -> SessionState:
        """Raises UnknownConfigOption or InvalidConfigValue; nothing changes then."""

        def change(session: Session) -> None:
            checked = self._catalog.check_option(option_id, value, session.settings)
            session.configure(option_id, checked, at=self._clock.now())

        await save_setting(self._uow, session, change)
        await self._tell(session, mode_changed=option_id == MODE_OPTION_ID)
        return state_of(session, self._catalog)

    async def mode(self, session: Session, mode_id: object) -> SessionState:
        """Raises UnknownMode; nothing changes then."""
        checked = self._catalog.check_mode(mode_id)
        await save_setting(self._uow, session, lambda s: s.set_mode(checked, at=self._clock.now()))
        await self._tell(session, mode_changed=True)
        return state_of(session, self._catalog)

    async def _tell(self, session: Session, *, mode_changed: bool) -> None:
        if mode_changed:
            await self._sink.emit(session.id, ModeChanged(mode_id=session.mode_id))
        options = self._catalog.options_for(session.settings)
        await self._sink.emit(session.id, ConfigOptionsChanged(options=options))


@dataclass(frozen=True, slots=True, kw_only=True)
class SetConfigOptionRequest:
    session_id: str
    option_id: str
    value: object


class SetConfigOption:
    """`session/set_config_option`: returns the session's full option list.

    Raises SessionNotFound, UnknownConfigOption or InvalidConfigValue."""

    def __init__(self, *, registry: SessionRegistry, settings: ChangeSettings) -> None:
        self._registry = registry
        self._settings = settings

    async def execute(self, request: SetConfigOptionRequest) -> SessionState:
        session = self._registry.require(request.session_id).session
        return await self._settings.option(session, request.option_id, request.value)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetModeRequest:
    session_id: str
    mode_id: str


class SetMode:
    """`session/set_mode`. Raises SessionNotFound or UnknownMode."""

    def __init__(self, *, registry: SessionRegistry, settings: ChangeSettings) -> None:
        self._registry = registry
        self._settings = settings

    async def execute(self, request: SetModeRequest) -> None:
        session = self._registry.require(request.session_id).session
        await self._settings.mode(session, request.mode_id)
