from collections.abc import Mapping
from dataclasses import replace

from application.errors import ModelError
from application.ports.clock import Clock
from application.ports.ids import IdGenerator
from application.ports.llm import LLMClient, ModelRequest, ModelResponse
from application.ports.tools import (
    Progress,
    ToolContext,
    ToolDefinition,
    ToolPlan,
    ToolResult,
    ToolRunner,
)
from application.system_prompt import environment_context, subagent_system_prompt
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.context import model_view
from domain.message import Message, Role
from domain.stop_reason import ModelStop
from domain.tools import READ_ONLY_TOOLS
from domain.usage import Usage

AGENT_TOOL = ToolDefinition(
    name="agent",
    description=(
        "Start a sub-agent with its own conversation to research a question in the working "
        "directory. It can only read (read_file, list_files, glob, grep, web_fetch) and "
        "returns its final answer. Use it for broad searches that would flood this "
        "conversation."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The task for the sub-agent."},
            "description": {"type": "string", "description": "A short label (3-5 words)."},
        },
        "required": ["prompt"],
    },
)


class SubAgentTools(ToolRunner):
    """Adds the `agent` tool to a runner: a nested agent loop with read-only tools.

    The sub-agent's read-only tools run without asking, but only inside the working
    directory; anything else is refused to it. Its model errors become an error result.
    """

    def __init__(
        self,
        *,
        inner: ToolRunner,
        llm: LLMClient,
        clock: Clock,
        ids: IdGenerator,
        max_requests: int,
        max_tokens: int,
    ) -> None:
        self._inner = inner
        self._llm = llm
        self._clock = clock
        self._ids = ids
        self._max_requests = max_requests
        self._max_tokens = max_tokens

    def definitions(self, names: tuple[str, ...] | None = None) -> tuple[ToolDefinition, ...]:
        inner = self._inner.definitions(names)
        return inner if names is not None and "agent" not in names else (*inner, AGENT_TOOL)

    async def plan(
        self, name: str, arguments: Mapping[str, object], context: ToolContext
    ) -> ToolPlan:
        if name != "agent":
            return await self._inner.plan(name, arguments, context)
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolPlan(problem="The agent tool needs a non-empty `prompt`.")
        return ToolPlan()

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        if name != "agent":
            return await self._inner.run(name, arguments, context, progress)
        # The same environment the calling turn was told, with the task.
        environment = context.briefing.environment
        messages = [
            replace(
                self._message(Role.USER, (TextBlock(text=str(arguments["prompt"])),)),
                context=environment_context(environment) if environment else None,
            )
        ]
        tools = self._inner.definitions(READ_ONLY_TOOLS)
        used = Usage()
        for _ in range(self._max_requests):
            try:
                response = await self._ask_model(context, messages, tools)
            except ModelError as exc:
                return ToolResult(
                    text=f"The sub-agent's model request failed: {exc}", is_error=True, usage=used
                )
            used = used + response.usage
            messages.append(self._message(Role.ASSISTANT, response.content))
            if response.stop is not ModelStop.TOOL_USE:
                answer = messages[-1].visible_text().strip()
                return ToolResult(
                    text=answer or "(the sub-agent gave no answer)",
                    raw_output={"answer": answer, "requests": len(messages) // 2},
                    usage=used,
                )
            results = [
                await self._run_read_only(use, context, progress) for use in messages[-1].tool_uses
            ]
            messages.append(self._message(Role.USER, tuple(results)))
        return ToolResult(
            text=f"The sub-agent stopped after {self._max_requests} model "
            "requests without a final answer.",
            is_error=True,
            usage=used,
        )

    async def _ask_model(
        self, context: ToolContext, messages: list[Message], tools: tuple[ToolDefinition, ...]
    ) -> ModelResponse:
        request = ModelRequest(
            model=context.model,
            system=subagent_system_prompt(
                cwd=context.cwd, instructions=context.briefing.instructions
            ),
            messages=tuple(model_view(messages)),
            max_tokens=self._max_tokens,
            tools=tools,
        )
        async for event in self._llm.stream(request):
            if isinstance(event, ModelResponse):
                return event
        raise ModelError("The model stream ended without a complete response.")

    async def _run_read_only(
        self, use: ToolUseBlock, context: ToolContext, progress: Progress
    ) -> ToolResultBlock:
        if use.name not in READ_ONLY_TOOLS:
            return ToolResultBlock(
                tool_use_id=use.id,
                is_error=True,
                content=f"{use.name} is not available to a sub-agent.",
            )
        plan = await self._inner.plan(use.name, use.input, context)
        if plan.problem or plan.always_asks:
            reason = plan.problem or plan.ask_reason or "it reaches outside the working directory"
            return ToolResultBlock(
                tool_use_id=use.id, is_error=True, content=f"Refused to the sub-agent: {reason}."
            )
        result = await self._inner.run(use.name, use.input, context, progress)
        return ToolResultBlock(tool_use_id=use.id, content=result.text, is_error=result.is_error)

    def _message(self, role: Role, content: tuple) -> Message:  # type: ignore[type-arg]
        return Message(
            id=self._ids.message_id(), role=role, content=content, created_at=self._clock.now()
        )
