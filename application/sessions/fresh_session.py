"""A new session as `session/new` makes it, in a module light enough for the path that
answers before the agent has loaded (bootstrap/early.py) as well as for NewSession."""

from datetime import datetime

from domain.choices import Choices
from domain.config import THOUGHT_OPTION_ID, Catalog
from domain.ids import SessionId
from domain.session import Session
from domain.workspace import Workspace


def fresh_session(
    session_id: SessionId, cwd: str, now: datetime, *, model: str, catalog: Catalog
) -> Session:
    return Session.start(
        id=session_id,
        workspace=Workspace(cwd=cwd),
        choices=Choices(
            model=model,
            mode_id=catalog.default_mode,
            # Stored with the session: a later change of the server's default leaves it be.
            config={THOUGHT_OPTION_ID: catalog.default_thought_level},
        ),
        at=now,
    )
