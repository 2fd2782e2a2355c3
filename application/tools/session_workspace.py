"""The workspace a session's tools get: its directories, under its sandbox policy."""

from application.ports.workspace import Workspace, Workspaces
from domain.config import Catalog
from domain.sandbox import UNCONFINED
from domain.session import Session


def session_workspace(
    workspaces: Workspaces, catalog: Catalog, session: Session, *, waived: bool = False
) -> Workspace:
    """Read at each call, so a sandbox or mode changed mid-turn holds from the next command.
    `waived`: the user let this one call run outside the sandbox."""
    policy = UNCONFINED if waived else catalog.sandbox_policy(session.settings)
    return workspaces.for_session(session.id, session.roots, policy)
