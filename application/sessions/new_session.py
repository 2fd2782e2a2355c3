from dataclasses import dataclass, replace

from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.errors import AuthRequired, WorktreeRefused
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient
from application.ports.unit_of_work import UnitOfWork
from application.ports.worktrees import Made, NoRepository, Worktrees
from application.runtime.registry import SessionRegistry
from application.sessions.fresh_session import fresh_session
from application.sessions.opening import OpenWith
from application.sessions.state import state_of
from domain.config import Catalog
from domain.ids import SessionId
from domain.session import Session
from domain.worktree import Isolation, branch_for


@dataclass(frozen=True, slots=True, kw_only=True)
class NewSessionRequest:
    cwd: str
    opening: SessionOpening = NOTHING_MORE
    isolation: Isolation | None = None  # None: the server's default (IAC_CODE_ISOLATION)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fresh:
    """How `session/new` makes a session: a new id, now, the server's default model, mode
    and thought level (fresh_session.py)."""

    ids: IdGenerator
    clock: Clock
    catalog: Catalog
    default_model: str

    def session(self, cwd: str, session_id: SessionId | None = None) -> Session:
        return fresh_session(
            session_id or self.ids.session_id(),
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
    - With isolation `worktree` (asked, or the server's default) the session works in a git
      worktree of its own, on a branch of its own, at the same place inside it as `cwd` is
      in its repository. Asked outside a repository: WorktreeRefused; by default there, the
      session works in `cwd` as it is.
    """

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        registry: SessionRegistry,
        open_with: OpenWith,
        fresh: Fresh,
        access: ModelAccess,
        worktrees: Worktrees,
        isolation: Isolation = Isolation.NONE,
    ) -> None:
        self._worktrees = worktrees
        self._isolation = isolation
        self._uow = uow
        self._registry = registry
        self._open_with = open_with
        self._fresh = fresh
        self._access = access

    async def execute(self, request: NewSessionRequest) -> SessionState:
        self._access.require()
        session_id = self._fresh.ids.session_id()
        made = await self._worktree(request, session_id)
        session = self._fresh.session(made.cwd if made else request.cwd, session_id)
        await self._open_with.apply(session, request.opening, stored=False)
        async with self._uow as uow:
            await uow.sessions.add(session)
            await uow.commit()
        self._registry.open(session).mcp_wanted = request.opening.mcp_servers
        state = state_of(session, self._fresh.catalog)
        return replace(state, worktree=made.worktree) if made else state

    async def _worktree(self, request: NewSessionRequest, session_id: str) -> Made | None:
        isolation = request.isolation or self._isolation
        if isolation is not Isolation.WORKTREE:
            return None
        try:
            return await self._worktrees.make(request.cwd, branch_for(session_id))
        except NoRepository as exc:
            if request.isolation is None:  # the server's default: where it can be
                return None
            raise WorktreeRefused(
                f"No worktree: {exc}.", cwd=request.cwd, isolation=isolation.value
            ) from None
