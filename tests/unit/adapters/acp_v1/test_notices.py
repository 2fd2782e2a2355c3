"""Session notices: shaped per client as they are delivered (the notice to a client that
advertised `session.notices`, its agent-text fallback or nothing to any other), numbered
once by the journal, and valid against the newest schema file."""

from typing import Any

import pytest

from adapters.acp_v1.notices import shaped_for, takes_notices
from adapters.acp_v1.rendering import V1Rendering
from adapters.acp_v1.wire import notification_for
from adapters.protocol.channels import SessionChannels
from application.attachments.room import Attachments
from domain.events import Notice, NoticeSeverity, SessionNotice
from domain.ids import MessageId, SessionId
from tests.fakes.clients import FakeClient
from tests.support.schema_file import problems_with

SID = SessionId("s1")
NOTICES: dict[str, Any] = {"session": {"notices": {}}}


def retrying(fallback: bool = True) -> SessionNotice:
    return SessionNotice(
        severity=NoticeSeverity.WARNING,
        title="Rate limited by the provider: retrying in 2 s",
        description="attempt 2 of 5",
        meta={"retry": {"attempt": 2, "secondsLeft": 2}},
        fallback=Notice(message_id=MessageId("m9"), text="[retrying in 2 s]\n")
        if fallback
        else None,
    )


async def _never_closed(session_id: str) -> None:
    raise AssertionError("nothing closes here")


class Numbering:
    """An UpdateLog that numbers updates in our `_meta`, as the journal does."""

    def __init__(self) -> None:
        self.recorded: list[dict[str, Any]] = []

    async def record(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        self.recorded.append(params)
        meta = dict(params.get("_meta") or {})
        meta["iac_code"] = {**meta.get("iac_code", {}), "seq": len(self.recorded)}
        return {**params, "_meta": meta}


@pytest.mark.parametrize(
    ("capabilities", "takes"),
    [
        (NOTICES, True),
        ({"session": {"notices": {"x": 1}}}, True),
        ({"session": {"notices": None}}, False),
        ({"session": {}}, False),
        ({"session": {"notices": True}}, False),  # not the schema's object
        ({}, False),
        (None, False),
        ("junk", False),
    ],
)
def test_only_an_object_at_session_notices_advertises_them(capabilities: Any, takes: bool) -> None:
    assert takes_notices(capabilities) is takes


def test_a_notice_is_valid_against_the_newest_schema_and_keeps_its_fallback_private() -> None:
    params = notification_for(SID, retrying())
    shaped = shaped_for(params, NOTICES)
    assert shaped == {
        "sessionId": SID,
        "update": {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Rate limited by the provider: retrying in 2 s",
            "description": "attempt 2 of 5",
            "_meta": {"iac_code": {"retry": {"attempt": 2, "secondsLeft": 2}}},
        },
    }
    assert problems_with("SessionNotification", shaped) == []


def test_a_client_without_notices_gets_the_fallback_text_or_nothing() -> None:
    fallback = shaped_for(notification_for(SID, retrying()), {})
    assert fallback is not None
    assert fallback["update"] == {
        "content": {"text": "[retrying in 2 s]\n", "type": "text"},
        "messageId": "m9",
        "sessionUpdate": "agent_message_chunk",
    }
    assert "_meta" not in fallback
    assert shaped_for(notification_for(SID, retrying(fallback=False)), {}) is None


def test_a_notice_needs_a_title() -> None:
    with pytest.raises(ValueError, match="title"):
        SessionNotice(severity=NoticeSeverity.INFO, title="  ")


async def test_each_peer_is_sent_its_shape_under_one_journal_number() -> None:
    room = Attachments(close=_never_closed, busy=lambda _: False)
    log = Numbering()
    channels = SessionChannels(room, V1Rendering(), update_log=log)
    modern, plain = FakeClient("modern", NOTICES), FakeClient("plain", {"fs": {}})
    room.attach(SID, modern)
    room.attach(SID, plain)

    await channels.emit(SID, retrying())
    await channels.emit(SID, retrying(fallback=False))

    assert len(log.recorded) == 2  # one number each, whoever receives what
    [(_, first), (_, second)] = modern.notified
    assert [first["update"]["sessionUpdate"], second["update"]["sessionUpdate"]] == [
        "notice",
        "notice",
    ]
    assert first["_meta"]["iac_code"]["seq"] == 1
    assert "fallback" not in first["_meta"]["iac_code"]
    assert second["_meta"]["iac_code"]["seq"] == 2
    [(_, only)] = plain.notified  # the second has no fallback: nothing
    assert only["update"]["sessionUpdate"] == "agent_message_chunk"
    assert only["_meta"]["iac_code"]["seq"] == 1
    assert "fallback" not in only["_meta"]["iac_code"]
    for _, params in modern.notified + plain.notified:
        assert problems_with("SessionNotification", params) == []


async def test_a_reconnecting_client_is_shaped_the_same_from_the_journal() -> None:
    room = Attachments(close=_never_closed, busy=lambda _: False)
    log = Numbering()
    channels = SessionChannels(room, V1Rendering(), update_log=log)
    await channels.emit(SID, retrying())  # nobody attached: only the journal has it
    journaled = {
        **log.recorded[0],
        "_meta": {"iac_code": {**log.recorded[0]["_meta"]["iac_code"], "seq": 1}},
    }

    for capabilities, kind in ((NOTICES, "notice"), (None, "agent_message_chunk")):
        peer = FakeClient("back", capabilities)
        attaching = channels.begin_attach(SID, peer)
        await attaching.send_missed([journaled])
        await attaching.go_live()
        [(_, params)] = peer.notified
        assert params["update"]["sessionUpdate"] == kind
        assert params["_meta"]["iac_code"]["seq"] == 1
        assert "fallback" not in params["_meta"]["iac_code"]
        room.detach(SID, peer)
