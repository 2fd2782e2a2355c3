"""What the model sees of a stored history: the /clear boundary and the compaction summary."""

from domain.context import SUMMARY_HEADING, current_context, model_view
from domain.message import Role
from tests.unit.domain.context.support import clear, command, compaction, output, reply, texts, user


def test_without_markers_the_model_sees_every_chat_message() -> None:
    history = [user("q1"), reply("a1"), user("q2")]
    context = current_context(history)
    assert context.summary is None and context.start == 0 and context.marker is None
    assert context.messages == history
    assert model_view(history) == history


def test_commands_and_their_outputs_never_reach_the_model() -> None:
    history = [user("q1"), command("/usage"), output("12 tokens"), reply("a1"), command("/help")]
    history += [output("Slash commands"), user("q2")]
    assert texts(model_view(history)) == [["q1"], ["a1"], ["q2"]]
    assert [i for i, _ in current_context(history).chat] == [0, 3, 6]


def test_the_model_sees_nothing_before_the_last_clear() -> None:
    history = [user("q1"), reply("a1"), clear(), user("q2"), reply("a2"), clear(), user("q3")]
    context = current_context(history)
    assert context.summary is None and context.marker is None
    assert context.start == 6
    assert texts(model_view(history)) == [["q3"]]


def test_right_after_a_clear_the_context_is_empty() -> None:
    history = [user("q1"), reply("a1"), clear()]
    assert current_context(history).messages == []
    assert model_view(history) == []


def test_a_compacted_context_opens_with_the_summary_then_the_kept_messages() -> None:
    q1, a1, q2, a2 = user("q1"), reply("a1"), user("q2"), reply("a2")
    marker = compaction("They fixed the parser.", keep_from=q2)
    q3 = user("q3")
    history = [q1, a1, q2, a2, marker, q3]

    context = current_context(history)
    assert context.summary == "They fixed the parser."
    assert context.marker == marker and context.start == 5
    assert context.messages == [q2, a2, q3]  # kept_from lies before the marker
    opening = context.opening()
    assert len(opening) == 1 and opening[0].role is Role.USER
    assert opening[0].visible_text() == SUMMARY_HEADING + "They fixed the parser."

    view = model_view(history)
    # The summary and the first kept prompt are both the user's: one message, summary first.
    assert texts(view) == [[SUMMARY_HEADING + "They fixed the parser.", "q2"], ["a2"], ["q3"]]
    assert [m.role for m in view] == [Role.USER, Role.ASSISTANT, Role.USER]


def test_a_kept_part_may_start_with_a_reply() -> None:
    q1, a1, q2, a2 = user("q1"), reply("a1"), user("q2"), reply("a2")
    history = [q1, a1, q2, a2, compaction("S", keep_from=a2), user("q3")]
    assert texts(model_view(history)) == [[SUMMARY_HEADING + "S"], ["a2"], ["q3"]]


def test_a_compaction_that_kept_nothing_leaves_the_summary_and_what_followed() -> None:
    history = [user("q1"), reply("a1"), compaction("S", keep_from=None), user("q2")]
    context = current_context(history)
    assert context.messages == [history[3]]
    assert texts(model_view(history)) == [[SUMMARY_HEADING + "S", "q2"]]


def test_commands_between_kept_messages_stay_out_of_the_compacted_context() -> None:
    q2 = user("q2")
    history = [user("q1"), reply("a1"), q2, command("/usage"), output(), reply("a2")]
    history += [command("/compact"), compaction("S", keep_from=q2), user("q3")]
    assert texts(model_view(history)) == [[SUMMARY_HEADING + "S", "q2"], ["a2"], ["q3"]]


def test_a_later_clear_wins_over_an_earlier_compaction() -> None:
    q2 = user("q2")
    history = [user("q1"), reply("a1"), q2, reply("a2"), compaction("S", keep_from=q2)]
    history += [user("q3"), reply("a3"), clear(), user("q4")]
    context = current_context(history)
    assert context.summary is None and context.opening() == []
    assert texts(model_view(history)) == [["q4"]]


def test_a_compaction_after_a_clear_summarises_only_what_followed_the_clear() -> None:
    q3 = user("q3")
    history = [user("q1"), reply("a1"), clear(), user("q2"), reply("a2"), q3, reply("a3")]
    history += [compaction("S", keep_from=q3), user("q4")]
    assert texts(model_view(history)) == [[SUMMARY_HEADING + "S", "q3"], ["a3"], ["q4"]]


def test_a_second_compaction_replaces_the_first_summary() -> None:
    q2, a2 = user("q2"), reply("a2")
    history = [user("q1"), reply("a1"), q2, a2, compaction("first", keep_from=q2)]
    # The second keeps from a message before the first marker: the first marker is skipped.
    history += [user("q3"), reply("a3"), compaction("second", keep_from=a2), user("q4")]
    assert texts(model_view(history)) == [
        [SUMMARY_HEADING + "second"],
        ["a2"],
        ["q3"],
        ["a3"],
        ["q4"],
    ]
