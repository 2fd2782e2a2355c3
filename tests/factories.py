"""Build-only factories of domain objects: nothing is persisted here."""

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from uuid import uuid4

import factory

from domain.choices import Choices
from domain.client_prompt import ClientPrompt
from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId, SessionId, ToolCallId
from domain.message import Message, Role
from domain.session import Session
from domain.spawn import Spawn
from domain.timestamps import Timestamps
from domain.tool_call import ToolCall
from domain.totals import Totals
from domain.usage import Usage
from domain.workspace import Workspace

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class DomainFactory(factory.Factory):
    class Meta:
        abstract = True
        strategy = factory.BUILD_STRATEGY

    @classmethod
    def _create(cls, model_class, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise TypeError("Domain factories only build; persist through the repository.")


class MessageFactory(DomainFactory):
    class Meta:
        model = Message

    id = factory.Sequence(lambda n: MessageId(f"msg_{n}"))
    role = Role.USER
    content = factory.LazyFunction(lambda: (TextBlock(text="Fix the failing test"),))
    created_at = factory.Sequence(lambda n: T0 + timedelta(seconds=n))

    class Params:
        reply = factory.Trait(
            role=Role.ASSISTANT,
            content=factory.LazyFunction(lambda: (TextBlock(text="Done."),)),
        )
        asking_tool = factory.Trait(
            role=Role.ASSISTANT,
            content=factory.LazyFunction(
                lambda: (
                    TextBlock(text="Let me look."),
                    ToolUseBlock(id="toolu_1", name="read_file", input={"path": "a.py"}),
                )
            ),
        )
        tool_answer = factory.Trait(
            content=factory.LazyFunction(
                lambda: (ToolResultBlock(tool_use_id="toolu_1", content="print('a')"),)
            ),
        )


class SessionFactory(DomainFactory):
    """A session as a store holds it (at `version`, 0 unless given), built from its parts
    named flat (cwd, model, title, messages …) through `Session.as_stored`."""

    class Meta:
        model = Session

    id = factory.LazyFunction(lambda: SessionId(f"sess_{uuid4().hex}"))
    cwd = "/home/dev/project"
    created_at = T0
    model = "claude-sonnet-4-5"

    @classmethod
    def _build(cls, model_class, *args, **kwargs):  # type: ignore[no-untyped-def]
        return stored_session(**kwargs)


def stored_session(
    *,
    id: SessionId,
    cwd: str,
    created_at: datetime,
    model: str,
    mode_id: str = "default",
    config: Mapping[str, object] | None = None,
    title: str | None = None,
    updated_at: datetime | None = None,
    messages: Sequence[Message] = (),
    additional_directories: tuple[str, ...] = (),
    mcp_servers: tuple[dict[str, object], ...] = (),
    system_prompt: ClientPrompt | None = None,
    spent: Usage | None = None,
    cost: float | None = None,
    rejected_tools: Iterable[str] = (),
    spawn: Spawn | None = None,
    version: int = 0,
) -> Session:
    return Session.as_stored(
        id=id,
        workspace=Workspace(
            cwd=cwd,
            additional_directories=additional_directories,
            mcp_servers=mcp_servers,
            system_prompt=system_prompt,
        ),
        choices=Choices(model=model, mode_id=mode_id, config=config or {}),
        title=title,
        timestamps=Timestamps(created_at=created_at, updated_at=updated_at or created_at),
        history=messages,
        version=version,
        totals=Totals(spent=spent or Usage(), cost=cost),
        rejected_tools=rejected_tools,
        spawn=spawn,
    )


class ToolCallFactory(DomainFactory):
    class Meta:
        model = ToolCall

    id = factory.Sequence(lambda n: ToolCallId(f"toolu_{n}"))
    name = "read_file"
    input = factory.LazyFunction(lambda: {"path": "README.md"})
