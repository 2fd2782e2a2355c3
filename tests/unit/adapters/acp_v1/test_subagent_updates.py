"""Sub-agents on the wire: each shape against the newest (unstable) schema file, and what
each client of the parent is sent: all of it with `clientCapabilities.subagents`, none of it
without; a child's own traffic is addressed to the child and not journaled."""

from typing import Any

import pytest

from adapters.acp_v1.rendering import V1Rendering
from adapters.acp_v1.subagent_updates import shows_subagents
from adapters.acp_v1.wire import notification_for
from adapters.protocol.channels import SessionChannels
from application.attachments.room import Attachments
from domain.events import (
    AgentEvent,
    ChildEvent,
    SessionMessageSent,
    SubagentChanged,
    SubagentState,
    TextDelta,
    ToolCallStarted,
    ToolCallUpdated,
)
from domain.ids import MessageId, SessionId, ToolCallId
from domain.tool_call import TextOutput, ToolCallStatus, ToolKind
from domain.usage import Usage
from tests.support.schema_file import problems_with
from tests.unit.adapters.protocol.test_fan_out import Client, Numbering

PARENT = SessionId("parent")
CHILD = SessionId("child")
CALL = ToolCallId("toolu_1")
STARTED = SubagentChanged(
    child_id=CHILD,
    state=SubagentState.RUNNING,
    tool_call_id=CALL,
    title="alpha",
    description="Where is alpha?",
    agent="researcher",
    cancellable=True,
)
TASK = ChildEvent(
    child_id=CHILD,
    event=SessionMessageSent(
        message_id=MessageId("m1"), sender=PARENT, recipient=CHILD, text="Where is alpha?"
    ),
)
SAID = ChildEvent(child_id=CHILD, event=TextDelta(message_id=MessageId("m2"), text="found"))
READ = ChildEvent(
    child_id=CHILD,
    event=ToolCallStarted(
        tool_call_id=ToolCallId("t1"),
        title="Read a.py",
        kind=ToolKind.READ,
        arguments={"path": "a.py"},
        status=ToolCallStatus.IN_PROGRESS,
        name="read_file",
    ),
)
READ_DONE = ChildEvent(
    child_id=CHILD,
    event=ToolCallUpdated(
        tool_call_id=ToolCallId("t1"),
        status=ToolCallStatus.COMPLETED,
        output=(TextOutput(text="def main(): ..."),),
    ),
)
ANSWER = SessionMessageSent(message_id=MessageId("m3"), sender=CHILD, recipient=PARENT, text="ok")
USED = Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2)
DONE = SubagentChanged(child_id=CHILD, state=SubagentState.DONE, tool_call_id=CALL, usage=USED)
FAILED = SubagentChanged(
    child_id=CHILD, state=SubagentState.FAILED, tool_call_id=CALL, usage=USED, error="boom"
)
CANCELLED = SubagentChanged(child_id=CHILD, state=SubagentState.CANCELLED, tool_call_id=CALL)
EVERY: tuple[AgentEvent, ...] = (STARTED, TASK, READ, READ_DONE, SAID, ANSWER, DONE)


@pytest.mark.parametrize("event", [*EVERY, FAILED, CANCELLED])
def test_each_shape_is_the_unstable_schemas(event: AgentEvent) -> None:
    params = notification_for(PARENT, event)
    assert problems_with("SessionNotification", params, "unstable") == []


def test_the_announcement_and_the_end() -> None:
    started = notification_for(PARENT, STARTED)
    assert started["sessionId"] == PARENT
    assert started["update"] == {
        "sessionUpdate": "subagent_update",
        "sessionId": CHILD,
        "state": {"state": "running"},
        "_meta": {"iac_code": {"toolCallId": CALL, "status": "running", "agent": "researcher"}},
        "capabilities": {"cancel": {}},
        "title": "alpha",
        "description": "Where is alpha?",
    }
    ended = notification_for(PARENT, FAILED)["update"]
    assert ended["capabilities"] is None  # nothing more to do to it
    assert ended["state"] == {
        "state": "idle",
        "stopReason": "error",
        "usage": {
            "totalTokens": 12,
            "inputTokens": 7,
            "outputTokens": 3,
            "cachedReadTokens": 2,
            "cachedWriteTokens": 0,
        },
        "error": {"code": -32603, "message": "boom"},
    }


def test_a_childs_traffic_is_addressed_to_the_child() -> None:
    said = notification_for(PARENT, SAID)
    assert said["sessionId"] == CHILD
    assert said["update"]["sessionUpdate"] == "agent_message_chunk"
    assert said["_meta"] == {"iac_code": {"parentSessionId": PARENT}}


@pytest.mark.parametrize(
    ("capabilities", "shows"),
    [({"subagents": {}}, True), ({"subagents": None}, False), ({}, False), (None, False)],
)
def test_only_an_object_advertises_subagents(capabilities: Any, shows: bool) -> None:
    assert shows_subagents(capabilities) is shows


async def _never_closed(session_id: str) -> None:
    pass


async def test_only_clients_that_show_subagents_are_sent_them() -> None:
    room = Attachments(close=_never_closed, busy=lambda _: True)
    numbering = Numbering()
    channels = SessionChannels(room, V1Rendering(), update_log=numbering)
    capable, plain = Client(), Client()
    capable.connection.client_capabilities = {"subagents": {}}
    plain.connection.client_capabilities = {"fs": {"readTextFile": True}}
    room.attach(PARENT, capable.connection)
    room.attach(PARENT, plain.connection)

    for event in (*EVERY, TextDelta(message_id=MessageId("m9"), text="parent")):
        await channels.emit(PARENT, event)

    sent = [m["params"] for m in capable.sent]
    assert [p["update"]["sessionUpdate"] for p in sent] == [
        "subagent_update",
        "session_message",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
        "session_message",
        "subagent_update",
        "agent_message_chunk",
    ]
    assert [p["sessionId"] for p in sent] == [PARENT, *[CHILD] * 4, PARENT, PARENT, PARENT]
    # The plain client gets only the parent's own text.
    assert [m["params"]["update"]["sessionUpdate"] for m in plain.sent] == ["agent_message_chunk"]
    # The parent's journal numbers its own updates, not the child's.
    assert [p["sessionId"] for _, p in numbering.recorded] == [PARENT] * 4
