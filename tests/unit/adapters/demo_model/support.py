"""Requests and streams of the offline demo model, for its tests."""

from adapters.llm.demo import DEMO_MODEL, DemoLLMClient
from adapters.llm.demo_script import next_step
from adapters.llm.demo_steps import Step
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.local import LocalWorkspace
from application.ports.llm import ModelEvent, ModelRequest
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.message import Message
from tests.factories import MessageFactory

TOOLS = LocalToolRunner().definitions()  # the tools a real session offers
NAMES = frozenset(t.name for t in TOOLS)

LOCAL = LocalWorkspace()  # the runner's workspace for contexts that bring none


def said(text: str) -> Message:
    return MessageFactory.build(content=(TextBlock(text=text),))


def step_for(text: str) -> Step:
    return next_step([said(text)], NAMES)


def after(call: ToolUseBlock, result: str, *, is_error: bool = False) -> list[Message]:
    """A conversation whose last message answers `call` with `result`."""
    return [
        said("do it"),
        MessageFactory.build(reply=True, content=(TextBlock(text="On it."), call)),
        MessageFactory.build(
            content=(ToolResultBlock(tool_use_id=call.id, content=result, is_error=is_error),)
        ),
    ]


def use(name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id="toolu_demo_001", name=name, input=arguments)


async def events(messages: list[Message], *, pace: float = 0) -> list[ModelEvent]:
    request = ModelRequest(
        model=DEMO_MODEL,
        system="You are a test.",
        messages=tuple(messages),
        max_tokens=100,
        tools=TOOLS,
    )
    return [e async for e in DemoLLMClient(pace=pace).stream(request)]
