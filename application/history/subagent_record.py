"""What is kept of a sub-agent run with the tool call that started it (its `raw_output`
under "subagent"), and the updates that show it again when the parent is loaded: the
child's announcement in its final state and its answer to the parent."""

from collections.abc import Mapping

from domain.events import AgentEvent, SessionMessageSent, SubagentChanged, SubagentState
from domain.ids import MessageId, SessionId, ToolCallId
from domain.usage import Usage

KEY = "subagent"


def subagent_record(
    *,
    child_id: SessionId,
    title: str | None,
    description: str | None,
    agent: str,
    state: SubagentState,
    used: Usage,
    answer_id: MessageId | None,
) -> dict[str, object]:
    record: dict[str, object] = {
        "sessionId": child_id,
        "agent": agent,
        "state": state.value,
        "usage": {
            "inputTokens": used.input_tokens,
            "outputTokens": used.output_tokens,
            "cachedReadTokens": used.cache_read_tokens,
            "cachedWriteTokens": used.cache_write_tokens,
        },
    }
    if title is not None:
        record["title"] = title
    if description is not None:
        record["description"] = description
    if answer_id is not None:
        record["answerId"] = answer_id
    return record


def replayed_subagent(
    parent_id: SessionId, call_id: ToolCallId, raw_output: Mapping[str, object], answer: str
) -> list[AgentEvent]:
    """The child as its parent's load shows it (nothing for a call without a record)."""
    record = raw_output.get(KEY)
    if not isinstance(record, Mapping) or not isinstance(record.get("sessionId"), str):
        return []
    try:
        state = SubagentState(str(record.get("state")))
        used = _usage(record.get("usage"))
    except ValueError:
        return []
    child_id = SessionId(str(record["sessionId"]))
    events: list[AgentEvent] = [
        SubagentChanged(
            child_id=child_id,
            state=state,
            tool_call_id=call_id,
            title=_text(record.get("title")),
            description=_text(record.get("description")),
            agent=_text(record.get("agent")),
            usage=used,
        )
    ]
    answer_id = record.get("answerId")
    if state is SubagentState.DONE and isinstance(answer_id, str):
        events.append(
            SessionMessageSent(
                message_id=MessageId(answer_id), sender=child_id, recipient=parent_id, text=answer
            )
        )
    return events


def _usage(value: object) -> Usage:
    counts = value if isinstance(value, Mapping) else {}

    def count(key: str) -> int:
        number = counts.get(key, 0)
        if not isinstance(number, int):
            raise ValueError(key)
        return number

    return Usage(
        input_tokens=count("inputTokens"),
        output_tokens=count("outputTokens"),
        cache_read_tokens=count("cachedReadTokens"),
        cache_write_tokens=count("cachedWriteTokens"),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
