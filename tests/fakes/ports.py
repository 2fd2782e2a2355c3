"""In-memory fakes of the application ports, shared by use-case tests."""

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Self

from application.errors import ModelError
from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient, ModelEvent, ModelRequest
from application.ports.permissions import PermissionAsker, PermissionRequest
from application.ports.session_repository import SessionRepository
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.ports.unit_of_work import UnitOfWork
from domain.events import AgentEvent
from domain.ids import MessageId, SessionId
from domain.message import Message
from domain.permission import PermissionDecision, PermissionOption, PermissionRules
from domain.session import Session
from domain.tool_call import ToolCallRecord
from domain.turn import Turn


class InMemorySessionRepository(SessionRepository):
    def __init__(self) -> None:
        self.items: dict[SessionId, Session] = {}
        self.messages: dict[SessionId, list[Message]] = {}
        self.turns: list[tuple[SessionId, Turn, str | None]] = []
        self.tool_calls: dict[SessionId, dict[str, ToolCallRecord]] = {}
        self.decisions: dict[SessionId, list[PermissionDecision]] = {}

    async def get(self, session_id: SessionId) -> Session | None:
        stored = self.items.get(session_id)
        if stored is None:
            return None
        return Session(
            id=stored.id,
            cwd=stored.cwd,
            created_at=stored.created_at,
            updated_at=stored.updated_at,
            model=stored.model,
            mode_id=stored.mode_id,
            title=stored.title,
            config=stored.config,
            messages=list(self.messages[session_id]),
            permissions=self._rules(session_id),
        )

    def _rules(self, session_id: SessionId) -> PermissionRules:
        rules = PermissionRules()
        for decision in self.decisions.get(session_id, []):
            rules.learn(decision)
        return rules

    async def add(self, session: Session) -> None:
        self.items[session.id] = session
        self.messages[session.id] = list(session.messages)

    async def append_message(self, session: Session, message: Message) -> None:
        self.messages[session.id].append(message)

    async def save_settings(self, session: Session) -> None:
        self.items[session.id] = session

    async def record_turn(self, session_id: SessionId, turn: Turn, error: str | None) -> None:
        self.turns.append((session_id, turn, error))

    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        self.tool_calls.setdefault(session_id, {})[record.id] = record

    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        self.decisions.setdefault(session_id, []).append(decision)


class FakeUnitOfWork(UnitOfWork):
    """Changes are staged and applied to the shared repository only on commit."""

    def __init__(self, sessions: InMemorySessionRepository | None = None) -> None:
        self.sessions = sessions or InMemorySessionRepository()
        self.commits = 0

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    async def commit(self) -> None:
        self.commits += 1


class FixedClock(Clock):
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        self.current += timedelta(seconds=1)
        return self.current


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

    async def plan(self, name: str, arguments: Mapping[str, object], cwd: str) -> ToolPlan:
        if name not in self.tools:
            return ToolPlan(problem=f"There is no tool named {name!r}.")
        return self.plans.get(name, ToolPlan(locations=(f"{cwd}/{arguments.get('path', '')}",)))

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
