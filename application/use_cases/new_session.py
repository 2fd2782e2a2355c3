from dataclasses import dataclass

from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.errors import AuthRequired
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient
from application.ports.unit_of_work import UnitOfWork
from application.runtime import SessionRegistry
from application.use_cases.fresh_session import fresh_session
from application.use_cases.session_opening import OpenWith
from application.use_cases.session_state import state_of
from domain.config import Catalog


@dataclass(frozen=True, slots=True, kw_only=True)
class NewSessionRequest:
    cwd: str
    opening: SessionOpening = NOTHING_MORE


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
        llm: LLMClient,
        clock: Clock,
        ids: IdGenerator,
        catalog: Catalog,
        open_with: OpenWith,
        default_model: str,
        key_variable: str = "IAC_CODE_API_KEY",
    ) -> None:
        self._uow = uow
        self._registry = registry
        self._llm = llm
        self._clock = clock
        self._ids = ids
        self._catalog = catalog
        self._open_with = open_with
        self._default_model = default_model
        self._key_variable = key_variable

    async def execute(self, request: NewSessionRequest) -> SessionState:
        if not self._llm.has_credentials():
            raise AuthRequired(
                "No API key is configured for the model provider: run `iac-code login` (or "
                f"start the agent with {self._key_variable} set), then authenticate.",
                methodId="api-key",
            )
        session = fresh_session(
            self._ids.session_id(),
            request.cwd,
            self._clock.now(),
            model=self._default_model,
            catalog=self._catalog,
        )
        await self._open_with.apply(session, request.opening, stored=False)
        async with self._uow as uow:
            await uow.sessions.add(session)
            await uow.commit()
        self._registry.open(session).mcp_wanted = request.opening.mcp_servers
        return state_of(session, self._catalog)
