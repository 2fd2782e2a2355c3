"""The updates built as plain dicts are, byte for byte, what dumping the SDK's models gives:
for every kind built that way and any content (hypothesis draws it), but for the fields the
pinned SDK's models do not have yet (`NEWER_THAN_SDK`), which the newest schema file has."""

import json
from typing import Any

from acp import schema as acp
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.acp_v1.updates import MAX_SHOWN_CHARS, NEWER_THAN_SDK, update_dict
from adapters.acp_v1.wire import dump, notification_for, update_for
from domain.content import (
    AudioBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
)
from domain.events import (
    AgentEvent,
    ModeChanged,
    Notice,
    PlanUpdated,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallUpdated,
    UserContentReplayed,
)
from domain.ids import MessageId, ToolCallId
from domain.plan import PlanEntry, PlanPriority, PlanStatus
from domain.tool_call import DiffOutput, TerminalOutput, TextOutput, ToolCallStatus, ToolKind
from tests.support.schema_file import problems_with

text = st.text(max_size=20)
maybe = st.none() | text
json_leaf = st.none() | st.booleans() | st.integers() | text
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
mapping = st.dictionaries(text, json_value, max_size=4)
message_id = st.builds(MessageId, text)

user_blocks = st.one_of(
    st.builds(TextBlock, text=text),
    st.builds(ResourceLinkBlock, uri=text, name=text, title=maybe, mime_type=maybe),
    st.builds(
        EmbeddedResourceBlock, uri=text, text=maybe, mime_type=maybe, is_binary=st.booleans()
    ),
    st.builds(ImageBlock, mime_type=text, uri=maybe, data=maybe),
    st.builds(AudioBlock, mime_type=text),
    st.builds(ThinkingBlock, thinking=text),
    st.builds(ToolResultBlock, tool_use_id=text, content=text),
)
outputs = st.one_of(
    st.builds(DiffOutput, path=text, old_text=maybe, new_text=text),
    st.builds(TextOutput, text=text),
    st.builds(TerminalOutput, terminal_id=text, text=text),
)
statuses = st.sampled_from(ToolCallStatus)

events = st.one_of(
    st.builds(TextDelta, message_id=message_id, text=text),
    st.builds(Notice, message_id=message_id, text=text),
    st.builds(ThinkingDelta, message_id=message_id, text=text),
    st.builds(UserContentReplayed, message_id=message_id, block=user_blocks),
    st.builds(
        ToolCallStarted,
        tool_call_id=st.builds(ToolCallId, text),
        title=text,
        kind=st.sampled_from(ToolKind),
        arguments=st.none() | mapping,
        locations=st.lists(text, max_size=3).map(tuple),
        status=statuses,
        name=maybe,
    ),
    st.builds(
        ToolCallUpdated,
        tool_call_id=st.builds(ToolCallId, text),
        status=st.none() | statuses,
        title=st.none() | text,
        locations=st.none() | st.lists(text, max_size=3).map(tuple),
        arguments=st.none() | mapping,
        output=st.none() | st.lists(outputs, max_size=3).map(tuple),
        raw_output=st.none() | mapping,
    ),
    st.builds(
        PlanUpdated,
        entries=st.lists(
            st.builds(
                PlanEntry,
                content=text,
                status=st.sampled_from(PlanStatus),
                priority=st.sampled_from(PlanPriority),
            ),
            max_size=3,
        ).map(tuple),
    ),
)


def _through_models(session_id: str, event: AgentEvent) -> dict[str, Any]:
    return dump(acp.SessionNotification(session_id=session_id, update=update_for(event)))


def _wire(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def _as_the_sdk_knows_it(message: dict[str, Any]) -> dict[str, Any]:
    update = message["update"]
    newer = NEWER_THAN_SDK.get(update["sessionUpdate"], ())
    return {**message, "update": {k: v for k, v in update.items() if k not in newer}}


@settings(max_examples=400, deadline=None)
@given(session_id=text, event=events)
def test_each_update_is_the_json_the_sdk_models_dump(session_id: str, event: AgentEvent) -> None:
    assert update_dict(event) is not None
    built = _as_the_sdk_knows_it(notification_for(session_id, event))
    assert _wire(built) == _wire(_through_models(session_id, event))


def test_a_tool_call_carries_the_tools_name_as_the_newest_schema_spells_it() -> None:
    for name in ("bash", "mcp__github__create_issue"):
        started = ToolCallStarted(
            tool_call_id=ToolCallId("t"),
            title="Run",
            kind=ToolKind.EXECUTE,
            arguments=None,
            name=name,
        )
        built = notification_for("s", started)
        assert built["update"]["name"] == name
        assert problems_with("SessionNotification", built) == []
    unnamed = ToolCallStarted(
        tool_call_id=ToolCallId("t"), title="Run", kind=ToolKind.EXECUTE, arguments=None
    )
    assert "name" not in notification_for("s", unnamed)["update"]


def test_long_tool_call_fields_are_capped_as_the_models_cap_them() -> None:
    long = "x" * (MAX_SHOWN_CHARS + 10)
    started = ToolCallStarted(
        tool_call_id=ToolCallId("t"), title="Write", kind=ToolKind.EDIT, arguments={"text": long}
    )
    updated = ToolCallUpdated(
        tool_call_id=ToolCallId("t"),
        status=ToolCallStatus.COMPLETED,
        output=(DiffOutput(path="/a", old_text=long, new_text=long), TextOutput(text=long)),
        raw_output={"echo": long},
    )
    completed = ToolCallUpdated(tool_call_id=ToolCallId("t"), arguments={"text": long})
    for event in (started, updated, completed):
        built = _as_the_sdk_knows_it(notification_for("s", event))
        assert _wire(built) == _wire(_through_models("s", event))
        assert "truncated for display" in _wire(built)
        assert len(_wire(built)) < 4 * MAX_SHOWN_CHARS + 1000


def test_other_kinds_still_go_through_the_models() -> None:
    event = ModeChanged(mode_id="plan")
    assert update_dict(event) is None
    assert notification_for("s", event) == {
        "sessionId": "s",
        "update": {"currentModeId": "plan", "sessionUpdate": "current_mode_update"},
    }
