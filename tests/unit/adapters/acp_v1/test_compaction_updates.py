"""Compactions on the wire: the shapes against the newest schema file, and what each client
of a session is sent: all of it with `session.compaction`, today's chat notice without."""

from typing import Any

import pytest

from adapters.acp_v1.compaction_updates import (
    shown_to,
    shows_compactions,
)
from adapters.acp_v1.rendering import V1Rendering
from adapters.acp_v1.shaping import message_for_client
from adapters.acp_v1.updates import update_dict
from adapters.acp_v1.wire import notification_for
from adapters.protocol.channels import SessionChannels
from application.attachments.room import Attachments
from domain.events import (
    AgentEvent,
    CompactionChanged,
    CompactionStatus,
    CompactionSummaryDelta,
    Notice,
)
from domain.ids import MessageId, SessionId
from domain.message import compacted_notice
from tests.support.schema_file import problems_with
from tests.unit.adapters.protocol.test_fan_out import Client, Numbering

SID = SessionId("s1")
CID = MessageId("msg_compaction")
CAPABLE = {"session": {"compaction": {}}}
STARTED = CompactionChanged(
    compaction_id=CID, status=CompactionStatus.IN_PROGRESS, tokens_before=3_500, window=4_000
)
CHUNK = CompactionSummaryDelta(compaction_id=CID, text="SUMMARY: they counted.")
COMPLETED = CompactionChanged(
    compaction_id=CID,
    status=CompactionStatus.COMPLETED,
    tokens_before=3_500,
    tokens_after=700,
    window=4_000,
)
FAILED = CompactionChanged(
    compaction_id=CID, status=CompactionStatus.FAILED, tokens_before=3_500, error="overloaded"
)
CANCELLED = CompactionChanged(
    compaction_id=CID, status=CompactionStatus.CANCELLED, tokens_before=3_500, window=4_000
)
EVERY = (STARTED, CHUNK, COMPLETED, FAILED, CANCELLED)
NOTICE = compacted_notice(3_500, 700)


@pytest.mark.parametrize("event", EVERY, ids=lambda e: getattr(e, "status", "chunk"))
def test_each_update_is_what_the_newest_schema_file_describes(event: AgentEvent) -> None:
    params = notification_for(SID, event)
    assert problems_with("SessionNotification", params) == []


def test_the_counts_and_the_error_are_where_a_client_reads_them() -> None:
    assert notification_for(SID, COMPLETED)["update"] == {
        "compactionId": CID,
        "status": "completed",
        "_meta": {"iac_code": {"tokensBefore": 3_500, "tokensAfter": 700, "size": 4_000}},
        "sessionUpdate": "compaction_update",
    }
    failed = notification_for(SID, FAILED)["update"]
    assert (failed["status"], failed["error"]) == ("failed", "overloaded")
    assert failed["_meta"] == {"iac_code": {"tokensBefore": 3_500}}  # no window known
    assert notification_for(SID, CHUNK)["update"] == {
        "compactionId": CID,
        "content": {"text": "SUMMARY: they counted.", "type": "text"},
        "sessionUpdate": "compaction_summary_chunk",
    }


@pytest.mark.parametrize(
    ("capabilities", "shows"),
    [
        (CAPABLE, True),
        ({"session": {"compaction": {"_meta": {}}}, "fs": {}}, True),
        ({"session": {"compaction": None}}, False),
        ({"session": {"notices": {}}}, False),
        ({"session": None}, False),
        ({}, False),
        (None, False),
        ("junk", False),
    ],
)
def test_only_an_advertised_compaction_object_counts(capabilities: Any, shows: bool) -> None:
    assert shows_compactions(capabilities) is shows


def test_a_client_with_the_capability_is_sent_every_update_as_built() -> None:
    for event in EVERY:
        params = notification_for(SID, event)
        assert shown_to(CAPABLE, params) is params


def test_a_client_without_it_sees_a_completed_compaction_as_it_always_did() -> None:
    # Today's notice: an agent text chunk under the marker's id (the compaction's id).
    today = {"sessionId": SID, "update": update_dict(Notice(message_id=CID, text=NOTICE))}
    stamped = {**notification_for(SID, COMPLETED), "_meta": {"iac_code": {"seq": 7}}}
    assert shown_to(None, stamped) == {**today, "_meta": {"iac_code": {"seq": 7}}}
    for event in (STARTED, CHUNK, FAILED, CANCELLED):
        assert shown_to({}, notification_for(SID, event)) is None
    other = notification_for(SID, Notice(message_id=CID, text="hello"))
    assert shown_to({}, other) is other


def test_a_whole_message_owed_after_a_reconnect_is_shown_the_same_way() -> None:
    message = {"jsonrpc": "2.0", "method": "session/update"}
    started = {**message, "params": notification_for(SID, STARTED)}
    completed = {**message, "params": notification_for(SID, COMPLETED)}
    assert message_for_client(started, CAPABLE) == started
    assert message_for_client(started, {}) is None
    shown = message_for_client(completed, {})
    assert shown is not None and shown["params"]["update"]["content"]["text"] == NOTICE
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission"}
    assert message_for_client(request, {}) is request


async def _never_closed(session_id: str) -> None:
    raise AssertionError("nothing here closes a session")


async def test_clients_of_one_session_each_get_what_they_can_show() -> None:
    room = Attachments(close=_never_closed, busy=lambda _: True)
    numbering = Numbering()
    channels = SessionChannels(room, V1Rendering(), update_log=numbering)
    capable, plain = Client(), Client()
    capable.connection.client_capabilities = CAPABLE
    plain.connection.client_capabilities = {"fs": {"readTextFile": True}}
    room.attach(SID, capable.connection)
    room.attach(SID, plain.connection)

    for event in (STARTED, CHUNK, COMPLETED):
        await channels.emit(SID, event)

    assert len(numbering.recorded) == 3  # journaled once, as built
    kinds = [m["params"]["update"]["sessionUpdate"] for m in capable.sent]
    assert kinds == ["compaction_update", "compaction_summary_chunk", "compaction_update"]
    [notice] = plain.sent
    assert notice["params"]["update"] == update_dict(Notice(message_id=CID, text=NOTICE))
    # Its number is the completed update's, and the turn state rides on what it was sent.
    assert notice["params"]["_meta"]["seq"] == 3
    assert notice["params"]["_meta"]["iac_code"]["turn"] == {"state": "running"}
