"""A session records what changed, for a store to write exactly that."""

from datetime import timedelta

import pytest

from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.content import TextBlock
from domain.errors import InvalidClientPrompt
from domain.ids import SessionId
from domain.message import Role
from domain.session_changes import MessageAdded, Setting, SettingChanged, TitleGiven
from tests.factories import T0, MessageFactory, SessionFactory

BRIEF = ClientPrompt(mode=ClientPromptMode.APPEND, texts=("Brief.",))


def test_a_first_prompt_records_its_message_and_the_title_it_gave() -> None:
    session = SessionFactory(title=None)
    prompt = MessageFactory(content=(TextBlock(text="Fix the login bug\nplease"),))
    session.add_message(prompt)
    reply = MessageFactory(reply=True)
    session.add_message(reply)
    assert session.changes == (
        MessageAdded(0, prompt),
        TitleGiven("Fix the login bug"),
        MessageAdded(1, reply),
    )


def test_each_setting_records_what_it_overwrites() -> None:
    session = SessionFactory()
    session.rename("New name", at=T0)
    session.set_mode("plan", at=T0)
    session.choose_model("other", at=T0)
    session.configure("thought_level", "high", at=T0)
    session.open_with(("/extra",), ())
    session.set_system_prompt(BRIEF)
    assert [c.setting for c in session.changes if isinstance(c, SettingChanged)] == [
        Setting.TITLE,
        Setting.MODE,
        Setting.MODEL,
        Setting.CONFIG,
        Setting.WORKSPACE,
        Setting.SYSTEM_PROMPT,
    ]


def test_the_same_system_prompt_again_records_nothing_and_another_replaces_it() -> None:
    session = SessionFactory(system_prompt=BRIEF)
    assert (
        session.set_system_prompt(ClientPrompt(mode=ClientPromptMode.APPEND, texts=("Brief.",)))
        is False
    )
    assert session.changes == ()
    other = ClientPrompt(mode=ClientPromptMode.OVERRIDE, texts=("Brief.",))
    assert session.set_system_prompt(other) is True
    assert session.system_prompt == other
    assert session.fork(SessionId("f"), at=T0).system_prompt == other


def test_a_client_prompt_needs_a_block() -> None:
    with pytest.raises(InvalidClientPrompt):
        ClientPrompt(mode=ClientPromptMode.APPEND, texts=())


def test_opening_with_the_same_workspace_records_nothing() -> None:
    session = SessionFactory(additional_directories=("/extra",))
    session.open_with(("/extra",), ())
    assert session.changes == ()


def test_taken_changes_are_gone_and_restored_ones_come_first() -> None:
    session = SessionFactory(title="Named")
    first = MessageFactory()
    session.add_message(first)
    taken = session.take_changes()
    assert session.changes == ()
    second = MessageFactory(reply=True)
    session.add_message(second)
    session.restore_changes(taken)
    assert session.changes == (MessageAdded(0, first), MessageAdded(1, second))


def test_adopting_the_stored_copy_keeps_appends_that_follow_it() -> None:
    stored = SessionFactory(messages=[MessageFactory()], version=3, title="Renamed elsewhere")
    mine = stored.fork(stored.id, at=T0)  # the same history, read earlier
    mine.version = 1
    mine.set_mode("plan", at=T0)
    pending = MessageFactory(reply=True)
    mine.add_message(pending)
    mine.adopt(stored)
    assert (mine.version, mine.title, mine.mode_id) == (3, "Renamed elsewhere", stored.mode_id)
    assert mine.messages == (*stored.messages, pending)
    assert mine.changes == (MessageAdded(1, pending),)


def test_adopting_a_longer_stored_history_drops_appends_made_on_the_old_one() -> None:
    old = MessageFactory()
    stored = SessionFactory(
        messages=[old, MessageFactory(reply=True, created_at=T0 + timedelta(hours=1))]
    )
    mine = SessionFactory(id=stored.id, messages=[old])
    mine.add_message(MessageFactory(role=Role.USER))
    mine.adopt(stored)
    assert mine.messages == stored.messages
    assert mine.changes == ()
    mine.config["x"] = "y"
    assert "x" not in stored.config  # a copy, not the stored object's own dict


def test_every_setting_names_the_session_attributes_it_overwrites() -> None:
    session = SessionFactory()
    assert {s: s.fields for s in Setting}[Setting.WORKSPACE] == (
        "additional_directories",
        "mcp_servers",
    )
    for setting in Setting:
        for name in setting.fields:
            assert hasattr(session, name), (setting, name)
