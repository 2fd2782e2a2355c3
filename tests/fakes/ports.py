"""In-memory fakes of the application ports, shared by use-case tests."""

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Self

from application.errors import ModelError, SessionConflict
from application.ports.checkpoints import CheckpointStore, StoredUndo
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.leases import LeaseState, ReplicaPresence, TurnLeases
from application.ports.llm import LLMClient, ModelEvent, ModelRequest
from application.ports.mcp import (
    McpConnector,
    McpElicitations,
    McpPrompt,
    McpPromptError,
    McpServers,
    McpTool,
    StateChanged,
)
from application.ports.permissions import PermissionAsker, PermissionRequest
from application.ports.project_rules import ProjectRuleRepository
from application.ports.session_listing import SessionListing, SessionSummary
from application.ports.session_store import ActivityLog, SessionStore, TurnRecord
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.ports.unit_of_work import UnitOfWork
from domain.checkpoints import FileCheckpoint, Unrestorable
from domain.choices import Choices
from domain.events import AgentEvent
from domain.ids import MessageId, SessionId
from domain.mcp import McpServerSpec, McpServerState, McpStatus
from domain.message import Message
from domain.permission import PermissionDecision, PermissionOption, PermissionRules
from domain.project_rules import ProjectRule
from domain.session import Session
from domain.session_changes import MessageAdded, SettingChanged, TakenChanges, TitleGiven
from domain.spawn import Spawn
from domain.timestamps import Timestamps
from domain.tool_call import ToolCallRecord
from domain.turn import Turn
from domain.workspace import Workspace


@dataclass
class _Stored:
    settings: dict[str, object]
    messages: list[Message]
    tool_calls: dict[str, ToolCallRecord] = field(default_factory=dict)
    decisions: list[PermissionDecision] = field(default_factory=list)
    version: int = 0


def _settings(session: Session) -> dict[str, object]:
    return {
        "cwd": session.cwd,
        "title": session.title,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "model": session.model,
        "mode_id": session.mode_id,
        "config": dict(session.config),
        "additional_directories": session.additional_directories,
        "mcp_servers": session.mcp_servers,
        "system_prompt": session.system_prompt,
        "spawn": session.spawn,
    }


class InMemorySessionRepository(SessionStore, ActivityLog, SessionListing):
    """Keeps snapshots, like a database would: later changes to a Session object are only
    seen once they are stored through a method. Plays the store, the activity log and the
    listing (the contract tests hold it to the real ones)."""

    def __init__(self) -> None:
        self.stored: dict[SessionId, _Stored] = {}
        self.turns: list[tuple[SessionId, Turn, str | None]] = []

    @property
    def messages(self) -> dict[SessionId, list[Message]]:
        return {sid: s.messages for sid, s in self.stored.items()}

    @property
    def tool_calls_by_session(self) -> dict[SessionId, dict[str, ToolCallRecord]]:
        return {sid: s.tool_calls for sid, s in self.stored.items()}

    @property
    def decisions(self) -> dict[SessionId, list[PermissionDecision]]:
        return {sid: s.decisions for sid, s in self.stored.items()}

    async def get(self, session_id: SessionId) -> Session | None:
        stored = self.stored.get(session_id)
        if stored is None:
            return None
        rules = PermissionRules()
        for decision in stored.decisions:
            rules.learn(decision)
        s: dict[str, Any] = stored.settings  # as `_settings` wrote them
        return Session.as_stored(
            id=session_id,
            workspace=Workspace(
                cwd=s["cwd"],
                additional_directories=s["additional_directories"],
                mcp_servers=s["mcp_servers"],
                system_prompt=s["system_prompt"],
            ),
            choices=Choices(model=s["model"], mode_id=s["mode_id"], config=s["config"]),
            title=s["title"],
            timestamps=Timestamps(created_at=s["created_at"], updated_at=s["updated_at"]),
            history=list(stored.messages),
            version=stored.version,
            rejected_tools=rules.rejected,
            spawn=s["spawn"],
        )

    async def add(self, session: Session) -> None:
        session.take_changes()
        self.stored[session.id] = _Stored(_settings(session), list(session.messages))

    async def save(self, session: Session) -> None:
        taken = session.take_changes()
        if taken.changes:
            self.write(session, taken)

    def write(self, session: Session, taken: TakenChanges) -> None:
        """Store the changes taken from `session` (checked against the version it knew
        then); on a conflict they are put back."""
        stored = self.stored.get(session.id)
        added = [c for c in taken.changes if isinstance(c, MessageAdded)]
        settings = {c.setting for c in taken.changes if isinstance(c, SettingChanged)}
        fits = stored is not None and (
            stored.version == taken.version
            if settings or not added
            else len(stored.messages) == added[0].position
        )
        if stored is None or not fits:
            session.restore_changes(taken)
            raise SessionConflict("The session was changed elsewhere.", sessionId=session.id)
        mine = _settings(session)
        written = {"updated_at", *(name for s in settings for name in s.fields)}
        stored.settings.update({k: v for k, v in mine.items() if k in written})
        for change in taken.changes:
            if isinstance(change, TitleGiven) and stored.settings["title"] is None:
                stored.settings["title"] = change.title
        stored.messages.extend(c.message for c in added)
        stored.version += 1
        session.stored_as(stored.version, stored.settings["title"])  # type: ignore[arg-type]

    async def record_turn(self, session_id: SessionId, turn: Turn, error: str | None) -> None:
        self.turns.append((session_id, replace(turn), error))  # a snapshot, as stored

    async def turn_records(self, session_id: SessionId) -> list[TurnRecord]:
        mine = [
            TurnRecord(
                started_at=turn.started_at,
                finished_at=turn.finished_at,
                stop_reason=turn.stop_reason.value if turn.stop_reason else None,
                requests=turn.requests,
                usage=turn.usage,
                cost=turn.cost,
                error=error,
            )
            for sid, turn, error in self.turns
            if sid == session_id
        ]
        return sorted(mine, key=lambda r: r.started_at)  # stable: recording order breaks ties

    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        self.stored[session_id].tool_calls[record.id] = record

    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        self.stored[session_id].decisions.append(decision)

    async def tool_calls(self, session_id: SessionId) -> dict[str, ToolCallRecord]:
        return dict(self.stored[session_id].tool_calls)

    async def list_page(
        self,
        *,
        cwd: str | None,
        after: tuple[datetime, str] | None,
        limit: int,
        parent: str | None = None,
    ) -> list[SessionSummary]:
        rows = sorted(
            (
                (s.settings["updated_at"], sid, s)
                for sid, s in self.stored.items()
                if (cwd is None or s.settings["cwd"] == cwd) and _parent(s) == parent
            ),
            reverse=True,
        )
        if after is not None:
            rows = [r for r in rows if (r[0], r[1]) < after]
        return [
            SessionSummary(
                session_id=sid,
                cwd=s.settings["cwd"],  # type: ignore[arg-type]
                title=s.settings["title"],  # type: ignore[arg-type]
                updated_at=updated,
                message_count=len(s.messages),
                additional_directories=s.settings["additional_directories"],  # type: ignore[arg-type]
                spawn=s.settings["spawn"],  # type: ignore[arg-type]
            )
            for updated, sid, s in rows[:limit]
        ]

    async def fork(self, source: Session, fork: Session) -> None:
        fork.take_changes()
        parent = self.stored[source.id]
        self.stored[fork.id] = _Stored(
            _settings(fork),
            list(fork.messages),  # the copy's history, whatever the store holds since
            dict(parent.tool_calls),
            [d for d in parent.decisions if d.option is not None and d.option.remembered],
        )

    async def rewrite_history(self, session: Session, start: int) -> None:
        stored = self.stored.get(session.id)
        if stored is None or stored.version != session.version:
            raise SessionConflict("The session was changed elsewhere.", sessionId=session.id)
        stored.messages[start:] = session.messages[start:]
        stored.version += 1
        session.stored_as(stored.version, session.title)

    async def delete(self, session_id: SessionId, at: datetime) -> bool:
        for child_id in [sid for sid, s in self.stored.items() if _parent(s) == session_id]:
            await self.delete(child_id, at)  # its sub-agents' sessions go with it
        return self.stored.pop(session_id, None) is not None


def _parent(stored: _Stored) -> str | None:
    spawn = stored.settings["spawn"]
    return spawn.parent_id if isinstance(spawn, Spawn) else None


class InMemoryProjectRules(ProjectRuleRepository):
    def __init__(self) -> None:
        self.rules: list[ProjectRule] = []
        self._ids = itertools.count(1)

    async def for_project(self, cwd: str) -> list[ProjectRule]:
        mine = [r for r in self.rules if r.cwd == cwd]
        return sorted(mine, key=lambda r: (r.created_at, r.id or 0))  # oldest first, as stored

    async def add(self, rule: ProjectRule) -> ProjectRule:
        existing = next((r for r in self.rules if r.same_grant(rule)), None)
        if existing is not None:
            return existing
        stored = replace(rule, id=next(self._ids))
        self.rules.append(stored)
        return stored

    async def list(self, cwd: str | None = None) -> list[ProjectRule]:
        chosen = [r for r in self.rules if cwd is None or r.cwd == cwd]
        return sorted(chosen, key=lambda r: (r.cwd, r.created_at, r.id or 0))

    async def revoke(self, rule_id: int) -> ProjectRule | None:
        found = next((r for r in self.rules if r.id == rule_id), None)
        if found is not None:
            self.rules.remove(found)
        return found

    async def clear(self, cwd: str) -> int:
        before = len(self.rules)
        self.rules = [r for r in self.rules if r.cwd != cwd]
        return before - len(self.rules)


class InMemoryCheckpoints(CheckpointStore):
    """Checkpoints and their contents, written at once (no staging)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[FileCheckpoint]] = {}
        self.blobs: dict[tuple[str, str], bytes] = {}
        self.undos: dict[str, StoredUndo] = {}
        self._seqs = itertools.count(1)

    async def keep_undo(self, session_id: str, undo: StoredUndo) -> None:
        self.undos[session_id] = undo

    async def undo(self, session_id: str) -> StoredUndo | None:
        return self.undos.get(session_id)

    async def drop_undo(self, session_id: str) -> None:
        self.undos.pop(session_id, None)

    async def checkpoints(self, session_id: str) -> list[FileCheckpoint]:
        return list(self.rows.get(session_id, []))

    async def has(self, session_id: str, message_id: str, path: str) -> bool:
        return self._index(session_id, message_id, path) is not None

    async def add(self, session_id: str, checkpoint: FileCheckpoint, content: bytes | None) -> None:
        if content is not None:
            self.blobs.setdefault((session_id, checkpoint.prior), content)
        stored = replace(checkpoint, seq=next(self._seqs))
        self.rows.setdefault(session_id, []).append(stored)

    async def written(self, session_id: str, message_id: str, path: str, after: str) -> None:
        index = self._index(session_id, message_id, path)
        if index is not None:
            rows = self.rows[session_id]
            rows[index] = replace(rows[index], after=after)

    async def content(self, session_id: str, state: str) -> bytes | None:
        return self.blobs.get((session_id, state))

    async def stored_bytes(self, session_id: str) -> int:
        return sum(len(b) for (sid, _), b in self.blobs.items() if sid == session_id)

    async def drop(self, session_id: str, seq: int) -> None:
        rows = self.rows[session_id]
        index = next(i for i, c in enumerate(rows) if c.seq == seq)
        rows[index] = dropped = replace(rows[index], unrestorable=Unrestorable.DROPPED)
        if not any(c.prior == dropped.prior and c.unrestorable is None for c in rows):
            self.blobs.pop((session_id, dropped.prior), None)

    def _index(self, session_id: str, message_id: str, path: str) -> int | None:
        rows = self.rows.get(session_id, [])
        return next(
            (i for i, c in enumerate(rows) if c.message_id == message_id and c.path == path), None
        )


class FakeUnitOfWork(UnitOfWork):
    """Changes are staged and applied to the shared repository only on commit."""

    def __init__(
        self,
        sessions: InMemorySessionRepository | None = None,
        rules: InMemoryProjectRules | None = None,
        checkpoints: "InMemoryCheckpoints | None" = None,
    ) -> None:
        self.sessions = sessions or InMemorySessionRepository()
        self.activity = self.listing = self.sessions
        self.rules = rules or InMemoryProjectRules()
        self.checkpoints: InMemoryCheckpoints = checkpoints or InMemoryCheckpoints()
        self.commits = 0

    def reading(self) -> Self:
        return self

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    async def commit(self) -> None:
        self.commits += 1


@dataclass
class _Lease:
    holder: str
    expires_at: datetime
    cancel_requested: bool = False


class InMemoryTurnLeases(TurnLeases):
    """Leases beside an in-memory store: a lease needs its session stored there, and goes
    with it. Versions are the stored sessions' own."""

    def __init__(self, sessions: InMemorySessionRepository) -> None:
        self.sessions = sessions
        self.leases: dict[SessionId, _Lease] = {}
        self.renewals = 0  # writes while a turn runs (a poll is a read)

    def _live(self, session_id: SessionId, now: datetime) -> _Lease | None:
        lease = self.leases.get(session_id)
        if session_id not in self.sessions.stored or lease is None or lease.expires_at <= now:
            return None
        return lease

    async def acquire(
        self,
        session_id: SessionId,
        holder: str,
        now: datetime,
        until: datetime,
        *,
        gone: str | None = None,
    ) -> bool:
        live = self._live(session_id, now)
        if session_id not in self.sessions.stored or (
            live is not None and live.holder not in (holder, gone)
        ):
            return False
        self.leases[session_id] = _Lease(holder, until)
        return True

    async def renew(
        self, session_id: SessionId, holder: str, now: datetime, until: datetime
    ) -> LeaseState:
        self.renewals += 1
        state = await self.check(session_id, holder, now)
        if state.held:
            self.leases[session_id].expires_at = until
        return state

    async def check(self, session_id: SessionId, holder: str, now: datetime) -> LeaseState:
        live = self._live(session_id, now)
        if live is None or live.holder != holder:
            return LeaseState(held=False)
        return LeaseState(held=True, cancel_requested=live.cancel_requested)

    async def release(self, session_id: SessionId, holder: str) -> None:
        lease = self.leases.get(session_id)
        if lease is not None and lease.holder == holder:
            del self.leases[session_id]

    async def request_cancel(self, session_id: SessionId, now: datetime) -> bool:
        live = self._live(session_id, now)
        if live is not None:
            live.cancel_requested = True
        return live is not None

    async def live_holder(self, session_id: SessionId, now: datetime) -> str | None:
        live = self._live(session_id, now)
        return None if live is None else live.holder

    async def stored_version(self, session_id: SessionId) -> int | None:
        stored = self.sessions.stored.get(session_id)
        return None if stored is None else stored.version


class FakePresence(ReplicaPresence):
    """Holders a test declares exited."""

    def __init__(self) -> None:
        self.exited: set[str] = set()

    def here(self) -> None:
        pass

    def gone(self, holder: str) -> bool:
        return holder in self.exited


class FixedClock(Clock):
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        self.current += timedelta(seconds=1)
        return self.current


class StoppedClock(Clock):
    """Time that moves only when told: leases lapse when a test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


class SequentialIds(IdGenerator):
    def __init__(self) -> None:
        self._sessions = itertools.count(1)
        self._messages = itertools.count(1)

    def session_id(self) -> SessionId:
        return SessionId(f"sess_{next(self._sessions)}")

    def message_id(self) -> MessageId:
        return MessageId(f"msg_{next(self._messages)}")


class RecordingSink(EventSink):
    def __init__(self) -> None:
        self.events: list[tuple[SessionId, AgentEvent]] = []

    async def emit(self, session_id: SessionId, event: AgentEvent) -> None:
        self.events.append((session_id, event))

    def of_type(self, kind: type) -> list[AgentEvent]:
        return [e for _, e in self.events if isinstance(e, kind)]


Script = list[ModelEvent] | ModelError | Callable[[ModelRequest], AsyncIterator[ModelEvent]]


class ScriptedLLM(LLMClient):
    """Plays one script per request: a list of events, an error to raise, or a generator."""

    def __init__(self, *scripts: Script, credentials: bool = True) -> None:
        self.scripts = list(scripts)
        self.requests: list[ModelRequest] = []
        self._credentials = credentials
        self.started = asyncio.Event()

    def has_credentials(self) -> bool:
        return self._credentials

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        self.started.set()
        if not self.scripts:
            raise AssertionError("the model was called more often than scripted")
        script = self.scripts.pop(0)
        if isinstance(script, ModelError):
            raise script
        if callable(script):
            async for event in script(request):
                yield event
            return
        for event in script:
            yield event


class FakeTools(ToolRunner):
    """Tools by name: each a function of the arguments; `plans` override what plan() says."""

    def __init__(self, **tools: Callable[[Mapping[str, object]], Awaitable[ToolResult]]) -> None:
        self.tools = tools
        self.plans: dict[str, ToolPlan] = {}
        self.ran: list[tuple[str, Mapping[str, object]]] = []

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        return tuple(
            ToolDefinition(name=n, description=n, input_schema={"type": "object"})
            for n in self.tools
            if names is None or n in names
        )

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        if name not in self.tools:
            return ToolPlan(problem=f"There is no tool named {name!r}.")
        where = f"{context.cwd}/{arguments.get('path', '')}"
        return self.plans.get(name, ToolPlan(locations=(where,)))

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        self.ran.append((name, arguments))
        await progress("working\n")
        return await self.tools[name](arguments)


class ScriptedAsker(PermissionAsker):
    """Answers permission requests from a list; an Event answer waits for it forever."""

    def __init__(self, *answers: PermissionOption | Exception | asyncio.Event | None) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []
        self.asked = asyncio.Event()

    async def ask(
        self, session_id: SessionId, request: PermissionRequest
    ) -> PermissionOption | None:
        self.requests.append(request)
        self.asked.set()
        answer = self.answers.pop(0)
        if isinstance(answer, asyncio.Event):
            await answer.wait()
            return None
        if isinstance(answer, Exception):
            raise answer
        return answer


@dataclass
class FakeMcpServers(McpServers):
    """One session's MCP servers, as scripted: `tools`/`prompts` are offered once `ready`."""

    specs: tuple[McpServerSpec, ...]
    on_change: StateChanged
    tools_offered: tuple[McpTool, ...] = ()
    prompts_offered: tuple[McpPrompt, ...] = ()
    results: dict[str, ToolResult] = field(default_factory=dict)
    prompt_texts: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    prompt_calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    closed: bool = False
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    elicitations: McpElicitations | None = None  # what the session lent for elicitation
    _states: dict[str, McpServerState] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for spec in self.specs:
            self._states[spec.name] = McpServerState(name=spec.name, status=McpStatus.CONNECTING)

    async def settle(self, name: str, status: McpStatus, error: str | None = None) -> None:
        """The test decides when (and how) a server finishes connecting."""
        tools = sum(t.server == name for t in self.tools_offered)
        prompts = sum(p.server == name for p in self.prompts_offered)
        state = McpServerState(name=name, status=status, tools=tools, prompts=prompts, error=error)
        self._states[name] = state
        if all(s.status is not McpStatus.CONNECTING for s in self._states.values()):
            self.connected.set()
        await self.on_change(state)

    def states(self) -> tuple[McpServerState, ...]:
        return tuple(self._states.values())

    async def ready(self) -> None:
        await self.connected.wait()

    def _up(self, server: str) -> bool:
        state = self._states.get(server)  # tools configured for a server not in this set
        return state is not None and state.status is McpStatus.CONNECTED

    def tools(self) -> tuple[McpTool, ...]:
        return tuple(t for t in self.tools_offered if self._up(t.server))

    def prompts(self) -> tuple[McpPrompt, ...]:
        return tuple(p for p in self.prompts_offered if self._up(p.server))

    async def call_tool(
        self, name: str, arguments: Mapping[str, object], *, call_id: str | None = None
    ) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        return self.results.get(name, ToolResult(text=f"{name} done"))

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> str:
        self.prompt_calls.append((name, dict(arguments)))
        if name not in self.prompt_texts:
            raise McpPromptError(f"no prompt {name!r}")
        return self.prompt_texts[name]

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class FakeMcpConnector(McpConnector):
    """Opens FakeMcpServers, configured by `configure` before the session opens them."""

    opened: list[FakeMcpServers] = field(default_factory=list)
    configure: Callable[[FakeMcpServers], None] = lambda servers: None

    def open(
        self,
        servers: Sequence[McpServerSpec],
        *,
        cwd: str,
        on_change: StateChanged,
        elicitations: McpElicitations | None = None,
    ) -> McpServers:
        fake = FakeMcpServers(specs=tuple(servers), on_change=on_change)
        fake.elicitations = elicitations
        self.configure(fake)
        self.opened.append(fake)
        return fake
