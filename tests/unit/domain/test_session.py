from datetime import timedelta

import pytest

from domain.choices import Choices
from domain.config import SessionConfig
from domain.content import TextBlock
from domain.errors import InvalidWorkingDirectory
from domain.ids import SessionId, ToolCallId
from domain.permission import Decider, PermissionDecision, PermissionOption
from domain.session import TITLE_LIMIT, Session, title_from
from domain.spawn import Spawn
from domain.timestamps import Timestamps
from domain.totals import Totals
from domain.usage import Usage
from domain.workspace import Workspace
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
    source = SessionFactory(
        rejected_tools={"bash"},
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
    fork.learn(rejecting("write_file"))
    fork.configure("thought_level", "low", at=T0)
    assert (fork.mode_id, fork.thought_level) == ("plan", "low")  # a fork starts in its parent's
    assert source.message_count == 1
    assert source.permissions.rejected == {"bash"}
    assert source.thought_level == "high"


def rejecting(tool_name: str) -> PermissionDecision:
    return PermissionDecision(
        tool_call_id=ToolCallId("toolu_1"),
        tool_name=tool_name,
        arguments={},
        option=PermissionOption.REJECT_ALWAYS,
        decided_by=Decider.USER,
        decided_at=T0,
    )


STORED_FIELDS = (
    "id",
    "cwd",
    "title",
    "created_at",
    "updated_at",
    "model",
    "mode_id",
    "config",
    "additional_directories",
    "mcp_servers",
    "system_prompt",
    "spent",
    "cost",
    "permissions",
    "spawn",
    "version",
    "messages",
)


@pytest.mark.parametrize("name", STORED_FIELDS)
def test_nothing_of_a_session_is_assigned_from_outside(name: str) -> None:
    session = SessionFactory()
    with pytest.raises(AttributeError):
        setattr(session, name, getattr(session, name))


def test_a_session_takes_no_attribute_of_its_own_from_outside() -> None:
    with pytest.raises(AttributeError):
        SessionFactory().stash = "x"  # type: ignore[attr-defined]


def test_a_new_session_starts_empty_at_version_zero() -> None:
    spawn = Spawn(parent_id=SessionId("p"), tool_call_id=ToolCallId("toolu_1"), agent="a")
    session = Session.start(
        id=SessionId("s"),
        workspace=Workspace(cwd="/p"),
        choices=Choices(model="m"),
        at=T0,
        title="Child",
        spawn=spawn,
    )
    assert (session.version, session.messages, session.changes) == (0, (), ())
    assert (session.created_at, session.updated_at) == (T0, T0)
    assert (session.spent, session.cost, session.permissions.rejected) == (Usage(), None, set())
    assert (session.title, session.spawn, session.mode_id) == ("Child", spawn, "default")


def test_a_stored_session_comes_back_with_its_totals_rules_and_version() -> None:
    message = MessageFactory()
    session = Session.as_stored(
        id=SessionId("s"),
        workspace=Workspace(cwd="/p", additional_directories=("/x",)),
        choices=Choices(model="m", mode_id="plan", config={"thought_level": "high"}),
        title="Stored",
        timestamps=Timestamps(created_at=T0, updated_at=T0 + timedelta(hours=1)),
        history=[message],
        version=7,
        totals=Totals(spent=Usage(input_tokens=5), cost=0.25),
        rejected_tools={"bash"},
    )
    assert (session.version, session.messages, session.changes) == (7, (message,), ())
    assert (session.spent, session.cost) == (Usage(input_tokens=5), 0.25)
    assert session.permissions.rejects("bash")
    assert session.roots == ("/p", "/x")
    assert (session.mode_id, session.thought_level) == ("plan", "high")


def test_a_session_learns_always_reject_answers_and_hands_out_copies() -> None:
    session = SessionFactory()
    session.permissions.rejected.add("bash")  # a copy: the session is not changed
    assert not session.permissions.rejects("bash")
    session.learn(rejecting("bash"))
    assert session.permissions.rejects("bash")
    assert session.changes == ()  # stored as the decision, not as a change


def test_charges_add_up_in_the_totals_without_a_change() -> None:
    session = SessionFactory()
    session.charge(Usage(input_tokens=10), None)
    session.charge(Usage(output_tokens=3), 0.5)
    assert (session.spent, session.cost) == (Usage(input_tokens=10, output_tokens=3), 0.5)
    assert session.changes == ()


def test_an_option_other_than_mode_and_model_goes_to_the_config() -> None:
    session = SessionFactory(config={"thought_level": "low"})
    session.configure("thought_level", "high", at=T0 + timedelta(hours=1))
    session.configure("mode", "plan", at=T0)
    assert (session.thought_level, session.mode_id) == ("high", "plan")
    assert session.updated_at == T0 + timedelta(hours=1)
    assert session.settings == SessionConfig(
        mode_id="plan",
        model=session.model,
        thought_level="high",
        options={"thought_level": "high"},
    )


def test_a_relative_extra_directory_leaves_the_workspace_as_it_was() -> None:
    session = SessionFactory(additional_directories=("/extra",))
    with pytest.raises(InvalidWorkingDirectory):
        session.open_with(("relative",), ())
    assert session.additional_directories == ("/extra",)
    assert session.changes == ()


def test_with_history_is_the_same_session_holding_other_messages() -> None:
    kept, dropped = MessageFactory(), MessageFactory(reply=True)
    session = SessionFactory(messages=[kept, dropped], version=4, title="T", mode_id="plan")
    session.add_message(MessageFactory())
    repaired = session.with_history([kept])
    assert repaired == session and repaired is not session
    assert (repaired.version, repaired.title, repaired.mode_id) == (4, "T", "plan")
    assert (repaired.messages, repaired.changes) == ((kept,), ())
    assert session.message_count == 3  # the original is left as it was


def test_a_fork_is_a_new_unstored_session_of_no_sub_agent() -> None:
    spawn = Spawn(parent_id=SessionId("p"), tool_call_id=ToolCallId("toolu_1"), agent="a")
    source = SessionFactory(version=5, spawn=spawn, spent=Usage(input_tokens=9), cost=1.0)
    fork = source.fork(SessionId("f"), at=T0)
    assert (fork.version, fork.spawn, fork.spent, fork.cost) == (0, None, Usage(), None)
