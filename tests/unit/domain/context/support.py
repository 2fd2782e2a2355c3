"""Stored messages of each kind, and the texts the model sees of them, for the context tests."""

import itertools
from datetime import UTC, datetime, timedelta

from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId
from domain.message import Compaction, Message, MessageKind, Role

T0 = datetime(2026, 1, 1, tzinfo=UTC)
_ids = itertools.count(1)


def _message(role: Role, *blocks: object, **fields: object) -> Message:
    n = next(_ids)
    return Message(
        id=MessageId(f"m{n}"),
        role=role,
        content=tuple(blocks),  # type: ignore[arg-type]
        created_at=T0 + timedelta(seconds=n),
        **fields,  # type: ignore[arg-type]
    )


def user(text: str = "question", *more: object) -> Message:
    return _message(Role.USER, TextBlock(text=text), *more)


def reply(text: str = "answer", *, tokens: int | None = None) -> Message:
    return _message(Role.ASSISTANT, TextBlock(text=text), context_tokens=tokens)


def asking(*ids: str, tokens: int | None = None) -> Message:
    uses = [ToolUseBlock(id=i, name="read_file", input={"path": f"{i}.py"}) for i in ids]
    return _message(Role.ASSISTANT, TextBlock(text="Let me look."), *uses, context_tokens=tokens)


def results(*ids: str, text: str = "contents") -> Message:
    return _message(Role.USER, *(ToolResultBlock(tool_use_id=i, content=text) for i in ids))


def command(text: str = "/usage") -> Message:
    return _message(Role.USER, TextBlock(text=text), kind=MessageKind.COMMAND)


def output(text: str = "Tokens used: 12") -> Message:
    return _message(Role.ASSISTANT, TextBlock(text=text), kind=MessageKind.COMMAND_OUTPUT)


def clear() -> Message:
    return _message(Role.ASSISTANT, TextBlock(text="Context cleared."), kind=MessageKind.CLEAR)


def compaction(summary: str, keep_from: Message | None) -> Message:
    facts = Compaction(
        keep_from=keep_from.id if keep_from else None, tokens_before=9000, tokens_after=900
    )
    return _message(
        Role.ASSISTANT, TextBlock(text=summary), kind=MessageKind.COMPACTION, compaction=facts
    )


def texts(messages: list[Message]) -> list[list[str]]:
    """Each message's blocks as text (tool blocks by kind), to compare views."""
    shown = []
    for message in messages:
        blocks = []
        for block in message.content:
            match block:
                case TextBlock(text=text):
                    blocks.append(text)
                case ToolUseBlock(id=id_):
                    blocks.append(f"use {id_}")
                case ToolResultBlock(tool_use_id=id_):
                    blocks.append(f"result {id_}")
                case _:
                    blocks.append(type(block).__name__)
        shown.append(blocks)
    return shown
