from dataclasses import dataclass

from application.compaction.compactor import replayed as compaction_replayed
from application.dto import NOTHING_MORE, SessionOpening, SessionState
from application.errors import SessionConflict, SessionNotFound
from application.history.subagent_record import replayed_subagent
from application.ports.event_sink import EventSink
from application.ports.unit_of_work import UnitOfWork
from application.runtime.registry import ActiveSession, SessionRegistry
from application.sessions.opening import OpenWith
from application.sessions.state import state_of
from application.sessions.turn_lease import TurnLeasing
from application.tasks.background_tasks import BackgroundTasks
from domain.config import Catalog
from domain.content import ToolResultBlock, ToolUseBlock
from domain.events import (
    AgentEvent,
    Notice,
    PlanUpdated,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallUpdated,
    UserContentReplayed,
)
from domain.history import repair
from domain.ids import SessionId, ToolCallId
from domain.message import Message, MessageKind, Role
from domain.plan import written_plan
from domain.session import Session
from domain.tasks import as_shown_now
from domain.tool_call import TextOutput, ToolCallRecord, ToolCallStatus
from domain.tools import call_record


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadSessionRequest:
    session_id: str
    cwd: str
    opening: SessionOpening = NOTHING_MORE


NO_SESSION = SessionId("")  # a history shown outside any session (its sub-agents' answers too)


def _tool_events(
    session_id: SessionId,
    use: ToolUseBlock,
    record: ToolCallRecord | None,
    result: ToolResultBlock | None,
) -> list[AgentEvent]:
    call_id = ToolCallId(use.id)
    if record is None:  # not recorded (imported, or lost in a crash): rebuild from the result
        failed = result is None or result.is_error
        status = ToolCallStatus.FAILED if failed else ToolCallStatus.COMPLETED
        output = (TextOutput(text=result.content),) if result else ()
        record = call_record(use, status, output=output)
    # A sub-agent's child is announced (in its final state) after the call that started
    # it, as it was live, with its answer to the parent.
    answer = result.content if result is not None and isinstance(result.content, str) else ""
    child = replayed_subagent(session_id, call_id, record.raw_output or {}, answer)
    return [
        ToolCallStarted(
            tool_call_id=call_id,
            title=record.title,
            kind=record.kind,
            arguments=record.arguments,
            locations=record.locations,
            name=record.name,
        ),
        *child,
        ToolCallUpdated(
            tool_call_id=call_id,
            status=record.status,
            output=record.output,
            raw_output=record.raw_output,
        ),
    ]


def replay_events(
    messages: tuple[Message, ...],
    records: dict[str, ToolCallRecord],
    parent_id: SessionId = NO_SESSION,
) -> list[AgentEvent]:
    """The updates that show a stored history again, in the shapes the live turns used
    (`parent_id`: the session's, which its sub-agents answered)."""
    events: list[AgentEvent] = []
    for index, message in enumerate(messages):
        if not message.is_chat and message.role is Role.ASSISTANT:
            events.extend(_marker_events(message))
            continue
        if message.role is Role.USER:
            events.extend(
                UserContentReplayed(message_id=message.id, block=b)
                for b in message.shown_content()
                if not isinstance(b, ToolResultBlock)
            )
            continue
        if thinking := message.thinking_text():
            events.append(ThinkingDelta(message_id=message.id, text=thinking))
        if text := message.visible_text():
            events.append(TextDelta(message_id=message.id, text=text))
        following = messages[index + 1] if index + 1 < len(messages) else None
        results = {r.tool_use_id: r for r in following.tool_results} if following else {}
        for use in message.tool_uses:
            events.extend(_tool_events(parent_id, use, records.get(use.id), results.get(use.id)))
            # A todo_write shows its plan after its call, as it did live.
            if (plan := written_plan(use, results.get(use.id))) is not None:
                events.append(PlanUpdated(entries=plan))
    return events


def _marker_events(message: Message) -> list[AgentEvent]:
    """A command's answer, a /clear or a compaction, shown as it was live."""
    match message.kind:
        case MessageKind.COMPACTION:
            return compaction_replayed(message)
        case MessageKind.CLEAR:
            text = message.visible_text()
            return [Notice(message_id=message.id, text=text), PlanUpdated(entries=())]
    return [Notice(message_id=message.id, text=message.visible_text())]


class StoredSessions:
    """Brings stored sessions into memory, repaired once and for all."""

    def __init__(self, *, uow: UnitOfWork, registry: SessionRegistry, leasing: TurnLeasing) -> None:
        self._uow = uow
        self.registry = registry
        self._leasing = leasing

    async def open(self, session_id: str, cwd: str) -> Session:
        """The open session, or the stored one opened now. Checks it lives in `cwd`."""
        active = self.registry.find(session_id)
        if active is not None:
            await self.refresh(active)
        session = active.session if active else await self.fetch(session_id)
        return self._opened(session, cwd)

    async def refresh(self, active: ActiveSession, *, own_turn: bool = False) -> None:
        """Read the open session again if another process stored a change of it since this
        copy was read (its version differs). A turn running here keeps its copy current,
        so a busy session is left alone unless it is that turn (`own_turn`) starting."""
        if active.busy and not own_turn:
            return
        stored = await self._leasing.stored_version(active.session.id)
        if stored is not None and stored != active.session.version:
            # The same object: whoever holds the session (a running command) sees it too.
            active.session.read_again(await self.fetch(active.session.id))

    async def open_with_tool_calls(
        self, session_id: str, cwd: str
    ) -> tuple[Session, dict[str, ToolCallRecord]]:
        """`open`, and the session's recorded tool calls, read in the same unit of work."""
        active = self.registry.find(session_id)
        if active is not None:
            await self.refresh(active)
            return self._opened(active.session, cwd), await self.tool_calls(session_id)
        async with self._uow.reading() as uow:
            session = await self._read(uow, session_id)
            records = await uow.activity.tool_calls(session.id)
        return self._opened(await self._repaired(session), cwd), records

    def _opened(self, session: Session, cwd: str) -> Session:
        if session.cwd != cwd:
            raise SessionNotFound(
                f"Session {session.id!r} belongs to {session.cwd!r}, not {cwd!r}.",
                sessionId=session.id,
                cwd=session.cwd,
            )
        return self.registry.open(session).session

    async def fetch(self, session_id: str) -> Session:
        async with self._uow.reading() as uow:
            session = await self._read(uow, session_id)
        return await self._repaired(session)

    @staticmethod
    async def _read(uow: UnitOfWork, session_id: str) -> Session:
        session = await uow.sessions.get(session_id)  # type: ignore[arg-type]
        if session is None:
            raise SessionNotFound(
                f"No session with id {session_id!r} exists.", sessionId=session_id
            )
        return session

    async def _repaired(self, session: Session, *, again: bool = True) -> Session:
        """The session with an interrupted history made whole (see domain.history.repair),
        stored so, unless its turn may still be running in another process."""
        repaired = repair(session.messages)
        # A sound history comes back as the same objects: the comparison is by identity.
        if repaired == list(session.messages):
            return session
        start = _first_difference(session.messages, repaired)
        session = session.with_history(repaired)
        # A sub-agent's session is written by its run alone (which may still be going on):
        # repaired for this answer only.
        if session.spawn is not None or (await self._leasing.running_elsewhere(session.id)):
            # Its turn still appends there: repaired for this answer only, not stored.
            session.keep_in_memory()
            return session
        try:
            async with self._uow as uow:
                await uow.sessions.rewrite_history(session, start)
                await uow.commit()
        except SessionConflict:
            if again:  # stored elsewhere since it was read (a rename, say): repair that
                async with self._uow.reading() as uow:
                    stored = await self._read(uow, session.id)
                return await self._repaired(stored, again=False)
            session.keep_in_memory()  # this answer's copy only; read again later
        return session

    async def tool_calls(self, session_id: str) -> dict[str, ToolCallRecord]:
        async with self._uow.reading() as uow:
            return await uow.activity.tool_calls(session_id)  # type: ignore[arg-type]


def _first_difference(old: tuple[Message, ...], new: list[Message]) -> int:
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return index
    return min(len(old), len(new))


@dataclass(frozen=True, slots=True)
class Loaded:
    """An opened session's state, and the updates that show its stored history."""

    state: SessionState
    replay: list[AgentEvent]


class LoadSession:
    """Open a stored session and replay its whole history to the client before answering.

    - Raises SessionNotFound for an unknown id, or when it lives in another cwd (the
      error says where).
    - The history is repaired first (persisted, so only once).
    - Loading a session that is already open replays it again without a second runtime,
      also while a turn runs: the replay is its completed messages, as they are when read
      (`prepare` returns them with no await after the read, so the caller can start
      following the live updates exactly from there).
    """

    def __init__(
        self,
        *,
        stored: StoredSessions,
        sink: EventSink,
        catalog: Catalog,
        open_with: OpenWith,
        tasks: BackgroundTasks,
    ) -> None:
        self._stored = stored
        self._sink = sink
        self._catalog = catalog
        self._open_with = open_with
        self._tasks = tasks

    async def prepare(self, request: LoadSessionRequest) -> Loaded:
        session, records = await self._stored.open_with_tool_calls(request.session_id, request.cwd)
        active = self._stored.registry.find(request.session_id)
        if active is None or not active.busy:  # a running turn's servers are left as they are
            await self._open_with.apply(session, request.opening, stored=True)
        live = self._tasks.running_calls(session.id)  # a call stored running may have ended
        records = {k: as_shown_now(r, live) for k, r in records.items()}
        return Loaded(
            state_of(session, self._catalog), replay_events(session.messages, records, session.id)
        )

    async def execute(self, request: LoadSessionRequest) -> SessionState:
        """`prepare`, with the replay sent to the sink."""
        loaded = await self.prepare(request)
        for event in loaded.replay:
            await self._sink.emit(loaded.state.session_id, event)  # type: ignore[arg-type]
        return loaded.state
