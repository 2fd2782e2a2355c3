"""A session records what changed, for a store to write exactly that."""

from datetime import timedelta

import pytest

from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.content import TextBlock
from domain.errors import InvalidClientPrompt
from domain.ids import SessionId, ToolCallId
from domain.message import Role
from domain.permission import Decider, PermissionDecision, PermissionOption
from domain.session_changes import (
    MessageAdded,
    Setting,
    SettingChanged,
    TakenChanges,
    TitleGiven,
)
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


def test_reading_the_stored_copy_again_keeps_appends_that_follow_it() -> None:
    stored = SessionFactory(messages=[MessageFactory()], version=3, title="Renamed elsewhere")
    # the same history, read earlier
    mine = SessionFactory(id=stored.id, messages=list(stored.messages), version=1)
    mine.set_mode("plan", at=T0)
    pending = MessageFactory(reply=True)
    mine.add_message(pending)
    mine.read_again(stored)
    assert (mine.version, mine.title, mine.mode_id) == (3, "Renamed elsewhere", stored.mode_id)
    assert mine.messages == (*stored.messages, pending)
    assert mine.changes == (MessageAdded(1, pending),)


def test_reading_a_longer_stored_history_again_drops_appends_made_on_the_old_one() -> None:
    old = MessageFactory()
    stored = SessionFactory(
        messages=[old, MessageFactory(reply=True, created_at=T0 + timedelta(hours=1))]
    )
    mine = SessionFactory(id=stored.id, messages=[old])
    mine.add_message(MessageFactory(role=Role.USER))
    mine.read_again(stored)
    assert mine.messages == stored.messages
    assert mine.changes == ()
    with pytest.raises(TypeError):
        mine.config["x"] = "y"  # type: ignore[index]  # read-only: changed by `configure`
    mine.configure("x", "y", at=T0)
    assert "x" not in stored.config  # the stored copy's settings are not shared


def test_every_setting_names_the_session_attributes_it_overwrites() -> None:
    session = SessionFactory()
    assert {s: s.fields for s in Setting}[Setting.WORKSPACE] == (
        "additional_directories",
        "mcp_servers",
    )
    for setting in Setting:
        for name in setting.fields:
            assert hasattr(session, name), (setting, name)


def test_taken_changes_carry_what_the_session_knew_of_the_store() -> None:
    session = SessionFactory(title=None, version=2)
    prompt = MessageFactory(content=(TextBlock(text="Fix the login bug"),))
    session.add_message(prompt)
    taken = session.take_changes()
    assert taken == TakenChanges(
        changes=(MessageAdded(0, prompt), TitleGiven("Fix the login bug")),
        version=2,
        title="Fix the login bug",
    )


def test_a_write_tells_the_session_its_version_and_the_title_stored() -> None:
    session = SessionFactory(title=None, version=2)
    session.add_message(MessageFactory(content=(TextBlock(text="From the prompt"),)))
    session.take_changes()
    session.stored_as(3, "Renamed elsewhere")  # the prompt's title yielded
    assert (session.version, session.title) == (3, "Renamed elsewhere")


def test_restored_changes_forget_what_the_store_said_since_they_were_taken() -> None:
    session = SessionFactory(title=None, version=2)
    first = MessageFactory(content=(TextBlock(text="From the prompt"),))
    session.add_message(first)
    taken = session.take_changes()
    session.stored_as(3, "Renamed elsewhere")  # written, then rolled back
    session.restore_changes(taken)
    assert (session.version, session.title) == (2, "From the prompt")
    # put back before the appends, which stay in the order of their positions
    assert session.changes == (TitleGiven("From the prompt"), MessageAdded(0, first))


def test_a_copy_kept_in_memory_matches_no_stored_version_until_written() -> None:
    session = SessionFactory(messages=[MessageFactory()], version=4)
    repaired = session.with_history([*session.messages, MessageFactory(reply=True)])
    repaired.keep_in_memory()
    assert repaired.version is None
    assert session.version == 4  # the copy it was made from is still the stored one
    repaired.stored_as(5, repaired.title)
    assert repaired.version == 5


def test_reading_again_takes_the_stored_version_of_a_copy_kept_in_memory() -> None:
    stored = SessionFactory(messages=[MessageFactory()], version=6)
    mine = stored.with_history([*stored.messages, MessageFactory(reply=True)])
    mine.keep_in_memory()
    mine.read_again(stored)
    assert (mine.version, mine.messages) == (6, stored.messages)


def test_appends_kept_when_reading_again_move_updated_at() -> None:
    stored = SessionFactory(messages=[MessageFactory(created_at=T0)], version=3)
    mine = SessionFactory(id=stored.id, messages=list(stored.messages), version=1)
    pending = MessageFactory(reply=True, created_at=T0 + timedelta(hours=2))
    mine.add_message(pending)
    mine.read_again(stored)
    assert mine.updated_at == T0 + timedelta(hours=2)
    assert stored.updated_at == T0  # the stored copy is left as it was
    assert stored.messages == mine.messages[:1]


def test_reading_again_shares_no_rules_with_the_stored_copy() -> None:
    stored = SessionFactory(rejected_tools={"bash"})
    mine = SessionFactory(id=stored.id)
    mine.read_again(stored)
    mine.learn(
        PermissionDecision(
            tool_call_id=ToolCallId("toolu_1"),
            tool_name="write_file",
            arguments={},
            option=PermissionOption.REJECT_ALWAYS,
            decided_by=Decider.USER,
            decided_at=T0,
        )
    )
    assert mine.permissions.rejected == {"bash", "write_file"}
    assert stored.permissions.rejected == {"bash"}


def test_a_session_reads_again_only_itself() -> None:
    with pytest.raises(ValueError, match="another session"):
        SessionFactory().read_again(SessionFactory())
