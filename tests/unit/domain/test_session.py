from datetime import timedelta

import pytest

from domain.content import TextBlock
from domain.errors import InvalidWorkingDirectory
from domain.session import TITLE_LIMIT, title_from
from tests.factories import T0, MessageFactory, SessionFactory


def test_cwd_must_be_absolute() -> None:
    with pytest.raises(InvalidWorkingDirectory):
        SessionFactory(cwd="relative/dir")


def test_first_user_prompt_titles_the_session() -> None:
    session = SessionFactory()
    titled = session.add_message(
        MessageFactory(content=(TextBlock(text="\n  Fix   the build\nnow"),))
    )
    assert titled
    assert session.title == "Fix the build"


def test_title_is_set_only_once() -> None:
    session = SessionFactory()
    session.add_message(MessageFactory())
    assert not session.add_message(MessageFactory(content=(TextBlock(text="Another"),)))
    assert session.title == "Fix the failing test"


def test_long_titles_are_shortened() -> None:
    title = title_from("x" * 500)
    assert title is not None
    assert len(title) == TITLE_LIMIT
    assert title.endswith("…")


def test_blank_prompt_gives_no_title() -> None:
    assert title_from("   \n\t") is None


def test_adding_a_message_moves_updated_at() -> None:
    session = SessionFactory()
    message = MessageFactory(created_at=T0 + timedelta(hours=1))
    session.add_message(message)
    assert session.updated_at == T0 + timedelta(hours=1)
    assert session.message_count == 1


def test_sessions_are_equal_by_id() -> None:
    a = SessionFactory()
    assert a == SessionFactory(id=a.id, cwd="/elsewhere")
    assert a != SessionFactory()


def test_a_fork_copies_history_and_rules_but_shares_neither() -> None:
    from domain.ids import SessionId
    from domain.permission import PermissionRules

    source = SessionFactory(
        permissions=PermissionRules({"bash"}),
        title="T",
        mode_id="plan",
        config={"thought_level": "high"},
    )
    source.add_message(MessageFactory())
    fork = source.fork(SessionId("sess_fork"), at=T0 + timedelta(days=1))
    assert (fork.id, fork.title, fork.cwd, fork.messages) == (
        "sess_fork",
        "T",
        source.cwd,
        source.messages,
    )
    assert fork.created_at == fork.updated_at == T0 + timedelta(days=1)
    fork.add_message(MessageFactory())
    fork.permissions.rejected.add("write_file")
    fork.configure("thought_level", "low", at=T0)
    assert (fork.mode_id, fork.thought_level) == ("plan", "low")  # a fork starts in its parent's
    assert source.message_count == 1
    assert source.permissions.rejected == {"bash"}
    assert source.thought_level == "high"
