"""Sessions open in this process: each one's runtime (its running turn, MCP servers,
briefing, queue), and the registry that opens and closes them."""

import asyncio
import contextlib
from dataclasses import dataclass, field, replace

from application.errors import SessionBusy, SessionNotFound
from application.ports.mcp import McpServers
from application.runtime.prompt_queue import PromptQueue
from application.runtime.turn_control import TurnControl
from domain.ids import SessionId
from domain.knowledge import Briefing
from domain.mcp import McpServerSpec
from domain.session import Session

CLOSE_GRACE = 5.0  # how long closing waits for a cancelled turn to store what it has


@dataclass(slots=True)
class ActiveSession:
    session: Session
    turn: TurnControl | None = None
    closing: bool = False  # on its way out: no new turn may start in it
    # Its MCP servers: those connected (or connecting), and those the last open asked for
    # (None: nothing new asked). Specs hold secrets: they live here, never in storage.
    mcp: McpServers | None = None
    mcp_specs: tuple[McpServerSpec, ...] = ()
    mcp_wanted: tuple[McpServerSpec, ...] | None = None
    mcp_notified: set[str] = field(default_factory=set)  # servers whose failure was told
    # What the session's turns are told besides the conversation (the environment only
    # while a turn runs), and the subdirectory instruction files added to the context so
    # far (each only once).
    briefing: Briefing = field(default_factory=Briefing)
    nested_loaded: set[str] = field(default_factory=set)  # their paths
    # Prompts held behind the running turn (clients that queue); see end_turn.
    queue: PromptQueue = field(default_factory=PromptQueue)

    def begin_turn(self, control: TurnControl | None = None) -> TurnControl:
        """The turn `control` stands for starts (a new one without): `control` may have been
        made when its prompt was received, so that a cancel right behind it finds it."""
        if self.closing:
            raise SessionNotFound(
                f"Session {self.session.id!r} is being closed.", sessionId=self.session.id
            )
        if self.turn is not None and self.turn is not control:  # not reserved for it
            raise SessionBusy(
                "A prompt is already running in this session; cancel it or wait for its answer.",
                sessionId=self.session.id,
            )
        self.turn = control or TurnControl()
        return self.turn

    def reserve(self, control: TurnControl) -> bool:
        """The session kept for the prompt `control` stands for, received while it is idle,
        until that prompt begins its turn (or passes it on through end_turn): what is
        received after it finds the session busy. False: a turn runs, is reserved, or
        prompts wait; or the session is closing."""
        if self.closing or self.turn is not None or len(self.queue):
            return False
        self.turn = control
        return True

    def end_turn(self, control: TurnControl) -> None:
        """The turn is over (or, reserved for a queued prompt, will not begin): the session
        goes to the oldest queued prompt at once, in this same step."""
        control.steers.close()  # a turn that never reached the model took none
        control.finished.set()
        if self.turn is control:
            self.turn = None
            # Read afresh when the next turn starts: an idle session need not hold it.
            if self.briefing.environment is not None:
                self.briefing = replace(self.briefing, environment=None)
            if not self.closing and (queued := self.queue.next()) is not None:
                self.turn = queued.control  # reserved: only that prompt may begin now

    @property
    def busy(self) -> bool:
        return self.turn is not None

    def cancel(self) -> None:
        if self.turn is not None:
            self.turn.cancelled.set()


class SessionRegistry:
    """The in-memory runtime of open sessions. Closing removes it; history stays stored."""

    def __init__(self) -> None:
        self._open: dict[SessionId, ActiveSession] = {}

    def open(self, session: Session) -> ActiveSession:
        active = self._open.get(session.id)
        if active is None or active.closing:  # a closing runtime is not reused
            active = self._open[session.id] = ActiveSession(session)
        return active

    def find(self, session_id: str) -> ActiveSession | None:
        """The open session; one being closed counts as not open."""
        active = self._open.get(SessionId(session_id))
        return None if active is None or active.closing else active

    def require(self, session_id: str) -> ActiveSession:
        active = self.find(session_id)
        if active is None:
            raise SessionNotFound(
                f"Session {session_id!r} is not open: create it with session/new or "
                "open it with session/load.",
                sessionId=session_id,
            )
        return active

    async def close(self, session_id: str) -> bool:
        """Cancel the running turn and wait (a bounded time) until it has stored what it
        has, then forget the session. After this, its stored history is final."""
        active = self.find(session_id)
        if active is None:
            return False
        active.closing = True
        active.queue.clear()  # what waited will not run: each answers cancelled
        turn = active.turn
        active.cancel()
        if turn is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(turn.finished.wait(), CLOSE_GRACE)
        if self._open.get(SessionId(session_id)) is active:
            del self._open[SessionId(session_id)]
        if active.mcp is not None:
            await active.mcp.aclose()
        return True

    async def close_all(self) -> None:
        """Close every open session (the process is stopping): their servers stop too."""
        await asyncio.gather(*(self.close(sid) for sid in self.open_ids()))

    def open_ids(self) -> list[SessionId]:
        return [sid for sid, active in self._open.items() if not active.closing]

    def is_busy(self, session_id: str) -> bool:
        active = self.find(session_id)
        return active is not None and active.busy

    def __len__(self) -> int:
        return len(self._open)
