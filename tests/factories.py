"""Build-only factories of domain objects: nothing is persisted here."""

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import factory

from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId, SessionId, ToolCallId
from domain.message import Message, Role
from domain.session import Session
from domain.tool_call import ToolCall

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
    class Meta:
        model = Session

    id = factory.LazyFunction(lambda: SessionId(f"sess_{uuid4().hex}"))
    cwd = "/home/dev/project"
    created_at = T0
    model = "claude-sonnet-4-5"


class ToolCallFactory(DomainFactory):
    class Meta:
        model = ToolCall

    id = factory.Sequence(lambda n: ToolCallId(f"toolu_{n}"))
    name = "read_file"
    input = factory.LazyFunction(lambda: {"path": "README.md"})
