"""Fork a session: a new session with its history (or the history before one prompt)."""

from dataclasses import replace

from application.checkpoints.file_checkpoints import carry_checkpoints
from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.unit_of_work import UnitOfWork
from application.ports.worktrees import Worktrees
from application.runtime.registry import SessionRegistry
from application.sessions.load_session import StoredSessions
from application.sessions.opening import OpenWith
from application.sessions.state import state_of
from domain.config import Catalog
from domain.worktree import branch_for


class ForkSession:
    """A new session with the same history and settings, independent from then on.

    The fork is opened; the source is left as it was (open or not). Cost does not depend
    on the history's length: the store shares the messages up to the fork point. The file
    checkpoints of the turns it holds are copied (a rewind of the fork restores files).
    A source working in its own worktree forks into a worktree of the fork's own, holding
    the source's current files.
    """

    def __init__(
        self,
        *,
        uow: UnitOfWork,
        stored: StoredSessions,
        registry: SessionRegistry,
        ids: IdGenerator,
        clock: Clock,
        catalog: Catalog,
        open_with: OpenWith,
        worktrees: Worktrees,
    ) -> None:
        self._worktrees = worktrees
        self._uow = uow
        self._open_with = open_with
        self._stored = stored
        self._registry = registry
        self._ids = ids
        self._clock = clock
        self._catalog = catalog

    async def execute(
        self,
        session_id: str,
        cwd: str,
        opening: SessionOpening = NOTHING_MORE,
        *,
        at_message_id: str | None = None,
    ) -> SessionState:
        """`at_message_id`: the fork holds the history before that prompt of the user's
        (as a rewind to it would leave it); None: all of it."""
        active = self._registry.find(session_id)
        source = active.session if active else await self._stored.fetch(session_id)
        if source.cwd != cwd:
            await self._stored.open(session_id, cwd)  # raises the "lives elsewhere" error
        fork_id = self._ids.session_id()
        made = None
        if (worktree := self._worktrees.of(source.cwd)) is not None:
            # A session in its own worktree forks into its own too, from its current files.
            made = await self._worktrees.fork(worktree, source.cwd, branch_for(fork_id))
        fork = source.fork(fork_id, at=self._clock.now(), cwd=made.cwd if made else None)
        if at_message_id is not None:
            fork.cut_at(source.prompt_position(at_message_id))
        await self._open_with.apply(fork, opening, stored=False)
        async with self._uow as uow:
            await uow.sessions.fork(source, fork)
            await carry_checkpoints(uow.checkpoints, source.id, fork)
            await uow.commit()
        self._registry.open(fork).mcp_wanted = opening.mcp_servers
        state = state_of(fork, self._catalog)
        return replace(state, worktree=made.worktree) if made else state
