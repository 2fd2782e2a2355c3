from dataclasses import dataclass

from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.errors import AuthRequired
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient
from application.ports.unit_of_work import UnitOfWork
from application.runtime.registry import SessionRegistry
from application.sessions.fresh_session import fresh_session
from application.sessions.opening import OpenWith
from application.sessions.state import state_of
from domain.config import Catalog
from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class NewSessionRequest:
    cwd: str
    opening: SessionOpening = NOTHING_MORE


@dataclass(frozen=True, slots=True, kw_only=True)
class Fresh:
    """How `session/new` makes a session: a new id, now, the server's default model, mode
    and thought level (fresh_session.py)."""

    ids: IdGenerator
    clock: Clock
    catalog: Catalog
    default_model: str

    def session(self, cwd: str) -> Session:
        return fresh_session(
            self.ids.session_id(),
            cwd,
            self.clock.now(),
            model=self.default_model,
            catalog=self.catalog,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelAccess:
    """Whether the model provider can be asked at all, and the variable to name when not."""

    llm: LLMClient
    key_variable: str = "IAC_CODE_API_KEY"

    def require(self) -> None:
        """Raises AuthRequired when the provider has no credentials."""
        if not self.llm.has_credentials():
            raise AuthRequired(
                "No API key is configured for the model provider: run `iac-code login` (or "
                f"start the agent with {self.key_variable} set), then authenticate.",
                methodId="api-key",
            )


class NewSession:
    """Create a session in `cwd`, store it, and open it.

    - Raises AuthRequired when the model provider has no credentials.
    - Raises InvalidWorkingDirectory for a relative cwd (existence is checked at the edge).
    """

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        open_with: OpenWith,
        fresh: Fresh,
        access: ModelAccess,
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._open_with = open_with
        self._fresh = fresh
        self._access = access

    async def execute(self, request: NewSessionRequest) -> SessionState:
        self._access.require()
        session = self._fresh.session(request.cwd)
        await self._open_with.apply(session, request.opening, stored=False)
        async with self._uow as uow:
            await uow.sessions.add(session)
            await uow.commit()
        self._registry.open(session).mcp_wanted = request.opening.mcp_servers
        return state_of(session, self._fresh.catalog)
