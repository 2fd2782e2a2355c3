from application.dto import SessionState
from domain.config import Catalog
from domain.session import Session


def state_of(session: Session, catalog: Catalog) -> SessionState:
    return SessionState(
        session_id=session.id,
        current_mode_id=catalog.usable_mode(session.mode_id),
        modes=catalog.modes,
        options=catalog.options_for(session.settings),
    )
