"""Fakes of the ports a turn drives: the event sink, the model, the tools, the permission asker."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

from application.errors import ModelError
from application.ports.event_sink import EventSink
from application.ports.llm import LLMClient, ModelEvent, ModelRequest
from application.ports.permissions import PermissionAsker, PermissionRequest
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from domain.events import AgentEvent
from domain.ids import SessionId
from domain.permission import PermissionOption


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
