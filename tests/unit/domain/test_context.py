"""What the model sees of a stored history: boundaries, the summary, caps and size."""

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from domain.content import ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.context import (
    IMAGE_TOKENS,
    MAX_TOOL_RESULT_CHARS,
    SUMMARY_HEADING,
    context_estimate,
    current_context,
    estimate_tokens,
    model_view,
    split_for_compaction,
)
from domain.history import repair
from domain.ids import MessageId
from domain.message import Compaction, Message, MessageKind, Role

T0 = datetime(2026, 1, 1, tzinfo=UTC)
_ids = itertools.count(1)


def _message(role: Role, *blocks: object, **fields: object) -> Message:
    n = next(_ids)
    return Message(
        id=MessageId(f"m{n}"),
        role=role,
        content=tuple(blocks),  # type: ignore[arg-type]
        created_at=T0 + timedelta(seconds=n),
        **fields,  # type: ignore[arg-type]
    )


def user(text: str = "question", *more: object) -> Message:
    return _message(Role.USER, TextBlock(text=text), *more)


def reply(text: str = "answer", *, tokens: int | None = None) -> Message:
    return _message(Role.ASSISTANT, TextBlock(text=text), context_tokens=tokens)


def asking(*ids: str, tokens: int | None = None) -> Message:
    uses = [ToolUseBlock(id=i, name="read_file", input={"path": f"{i}.py"}) for i in ids]
    return _message(Role.ASSISTANT, TextBlock(text="Let me look."), *uses, context_tokens=tokens)


def results(*ids: str, text: str = "contents") -> Message:
    return _message(Role.USER, *(ToolResultBlock(tool_use_id=i, content=text) for i in ids))


def command(text: str = "/usage") -> Message:
    return _message(Role.USER, TextBlock(text=text), kind=MessageKind.COMMAND)


def output(text: str = "Tokens used: 12") -> Message:
    return _message(Role.ASSISTANT, TextBlock(text=text), kind=MessageKind.COMMAND_OUTPUT)


def clear() -> Message:
    return _message(Role.ASSISTANT, TextBlock(text="Context cleared."), kind=MessageKind.CLEAR)


def compaction(summary: str, keep_from: Message | None) -> Message:
    facts = Compaction(
        keep_from=keep_from.id if keep_from else None, tokens_before=9000, tokens_after=900
    )
    return _message(
        Role.ASSISTANT, TextBlock(text=summary), kind=MessageKind.COMPACTION, compaction=facts
    )


def texts(messages: list[Message]) -> list[list[str]]:
    """Each message's blocks as text (tool blocks by kind), to compare views."""
    shown = []
    for message in messages:
        blocks = []
        for block in message.content:
            match block:
                case TextBlock(text=text):
                    blocks.append(text)
                case ToolUseBlock(id=id_):
                    blocks.append(f"use {id_}")
                case ToolResultBlock(tool_use_id=id_):
                    blocks.append(f"result {id_}")
                case _:
                    blocks.append(type(block).__name__)
        shown.append(blocks)
    return shown


# The /clear boundary


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


# The compaction boundary


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


# Over-long tool results


def test_an_over_long_tool_result_is_cut_for_the_model_but_stored_whole() -> None:
    long = "x" * (MAX_TOOL_RESULT_CHARS + 1234)
    exact = "y" * MAX_TOOL_RESULT_CHARS
    stored = _message(
        Role.USER,
        ToolResultBlock(tool_use_id="a", content=long),
        ToolResultBlock(tool_use_id="b", content=exact),
    )
    history = [user("q1"), asking("a", "b"), stored, reply("done")]

    view = model_view(history)

    cut, whole = view[2].content
    assert isinstance(cut, ToolResultBlock) and isinstance(whole, ToolResultBlock)
    assert cut.content.startswith("x" * MAX_TOOL_RESULT_CHARS)
    assert "x" * (MAX_TOOL_RESULT_CHARS + 1) not in cut.content
    assert cut.content.endswith("[1,234 more characters not shown]")
    assert cut.tool_use_id == "a"
    assert whole.content == exact  # at the cap: untouched
    assert history[2] is stored and stored.content[0].content == long  # type: ignore[union-attr]


# Size estimates


def test_an_image_counts_its_fixed_token_cost() -> None:
    text = user("what is this")
    with_image = user("what is this", ImageBlock(mime_type="image/png", data="AAAA"))
    assert estimate_tokens([with_image]) - estimate_tokens([text]) == IMAGE_TOKENS
    two = user("what is this", ImageBlock(mime_type="image/png"), ImageBlock(mime_type="a/b"))
    assert estimate_tokens([two]) - estimate_tokens([text]) == 2 * IMAGE_TOKENS


def test_every_kind_of_block_adds_to_the_estimate() -> None:
    base = estimate_tokens([_message(Role.ASSISTANT)])
    for block in [
        TextBlock(text="t" * 400),
        ThinkingBlock(thinking="t" * 400, signature="s"),
        ToolUseBlock(id="a", name="bash", input={"command": "c" * 400}),
        ToolResultBlock(tool_use_id="a", content="r" * 400),
    ]:
        assert estimate_tokens([_message(Role.ASSISTANT, block)]) > base + 100, block


def test_a_tool_result_counts_no_more_than_the_model_is_shown() -> None:
    at_cap = results("a", text="r" * MAX_TOOL_RESULT_CHARS)
    over = results("a", text="r" * (MAX_TOOL_RESULT_CHARS * 3))
    assert estimate_tokens([over]) == estimate_tokens([at_cap])


def test_with_no_counted_reply_the_estimate_is_overhead_plus_everything() -> None:
    history = [user("q1" * 50), reply("a1" * 80), user("q2")]
    assert context_estimate(history, overhead=700) == 700 + estimate_tokens(history)


def test_the_last_counted_reply_is_where_the_estimate_starts() -> None:
    later = [results("a"), reply("more"), user("q3" * 40)]
    history = [user("q1"), reply("a1", tokens=1_000), user("q2"), asking("a", tokens=5_000)]
    history += later
    # The overhead is inside the provider's count already.
    assert context_estimate(history, overhead=700) == 5_000 + estimate_tokens(later)


def test_commands_after_the_last_counted_reply_add_nothing() -> None:
    history = [user("q1"), reply("a1", tokens=4_321), command(), output("lots " * 100)]
    assert context_estimate(history, overhead=700) == 4_321


def test_after_a_clear_the_estimate_is_the_overhead_and_what_followed() -> None:
    history = [user("q1"), reply("a1", tokens=90_000), clear()]
    assert context_estimate(history, overhead=700) == 700
    history.append(user("q2"))
    assert context_estimate(history, overhead=700) == 700 + estimate_tokens([history[-1]])


def test_counted_replies_kept_from_before_a_compaction_are_ignored() -> None:
    # Their count was of the larger context before the summary.
    q2, a2 = user("q2"), reply("a2", tokens=90_000)
    history = [user("q1"), reply("a1", tokens=80_000), q2, a2]
    history += [compaction("the summary", keep_from=q2), user("q3")]
    context = current_context(history)
    expected = 700 + estimate_tokens([*context.opening(), q2, a2, history[-1]])
    assert context_estimate(history, overhead=700) == expected
    assert expected < 80_000


def test_a_counted_reply_after_the_compaction_marker_is_used() -> None:
    q2 = user("q2")
    history = [user("q1"), reply("a1", tokens=80_000), q2, reply("a2", tokens=90_000)]
    history += [compaction("S", keep_from=q2), user("q3"), reply("a3", tokens=3_000), user("q4")]
    assert context_estimate(history, overhead=700) == 3_000 + estimate_tokens([history[-1]])


# Where a compaction splits the conversation


def size(messages: list[Message]) -> int:
    return sum(estimate_tokens([m]) for m in messages)


def test_the_split_keeps_the_last_turns_verbatim() -> None:
    chat = [user("q1"), reply("a1"), user("q2"), reply("a2"), user("q3"), reply("a3")]
    assert split_for_compaction(chat, keep_turns=2, keep_budget=10_000) == 2
    assert split_for_compaction(chat, keep_turns=1, keep_budget=10_000) == 4
    assert split_for_compaction(chat, keep_turns=0, keep_budget=10_000) == len(chat)


def test_nothing_to_split_when_no_more_turns_than_kept() -> None:
    chat = [user("q1"), reply("a1"), user("q2"), asking("a"), results("a"), reply("a2")]
    assert split_for_compaction(chat, keep_turns=2, keep_budget=10_000) == 0
    assert split_for_compaction(chat, keep_turns=3, keep_budget=10_000) == 0
    assert split_for_compaction([], keep_turns=0, keep_budget=10_000) == 0


def test_an_over_budget_kept_part_starts_later_but_never_at_tool_results() -> None:
    big = "z" * 7_000  # about 2,000 tokens
    chat = [user("q1"), reply("a1"), user("q2"), asking("a"), results("a", text=big)]
    chat += [asking("b"), results("b", text="small"), reply("done")]
    budget = size(chat[5:]) + 10
    assert size(chat[3:]) > budget
    # The last two prompts are q1 and q2; the tool loop after q2 is too large to keep whole:
    # the split moves to the next tool use, never to the results that answer one.
    assert split_for_compaction(chat, keep_turns=2, keep_budget=budget) == 5


def test_when_nothing_fits_the_kept_part_is_the_shortest_possible() -> None:
    big = "z" * 7_000
    chat = [user("q1"), reply("a1"), user("q2"), asking("a"), results("a", text=big)]
    assert split_for_compaction(chat, keep_turns=1, keep_budget=10) == 3


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Chats as stored: prompts, tool loops (each use answered by the next message),
    replies; turns may end early (cancelled) and text lengths vary widely."""
    chat: list[Message] = []
    lengths = st.integers(min_value=0, max_value=3_000)
    for turn in range(draw(st.integers(min_value=1, max_value=8))):
        chat.append(user("p" * draw(lengths)))
        for loop in range(draw(st.integers(min_value=0, max_value=3))):
            ids = [f"t{turn}_{loop}_{n}" for n in range(draw(st.integers(1, 2)))]
            chat.append(asking(*ids))
            chat.append(results(*ids, text="r" * draw(lengths)))
        if draw(st.booleans()):
            chat.append(reply("a" * draw(lengths)))
    return chat


@given(
    chat=conversations(),
    keep_turns=st.integers(min_value=0, max_value=4),
    budget=st.integers(min_value=0, max_value=6_000),
)
def test_split_for_compaction_properties(chat: list[Message], keep_turns: int, budget: int) -> None:
    split = split_for_compaction(chat, keep_turns=keep_turns, keep_budget=budget)
    prompts = [i for i, m in enumerate(chat) if m.role is Role.USER and not m.tool_results]

    assert 0 <= split <= len(chat)
    if split < len(chat):
        # Tool results stay with the tool use they answer.
        assert not chat[split].tool_results
    if keep_turns and len(prompts) >= keep_turns and size(chat[prompts[-keep_turns] :]) <= budget:
        kept_prompts = [i for i in prompts if i >= split]
        assert len(kept_prompts) >= keep_turns
    if len(prompts) <= keep_turns and size(chat) <= budget:
        assert split == 0
    if size(chat[split:]) > budget:
        # Over budget only when no later place could start the kept part.
        later = [
            i
            for i in range(split + 1, len(chat))
            if chat[i].role is Role.ASSISTANT or not chat[i].tool_results
        ]
        assert later == []


def test_a_kept_part_survives_the_repair_of_a_load() -> None:
    # A reply cancelled while the model was thinking is stored with its thinking only. Here
    # the split lands on it (the prompt before is over the budget), and the repair on load
    # drops it: the model must still see what it saw before the load.
    q1, a1, q2 = user("q1"), reply("a1"), user("p" * 10_000)
    cut = _message(Role.ASSISTANT, ThinkingBlock(thinking="hmm"), interrupted=True)
    q3, a3, q4 = user("q3"), reply("a3"), user("q4")
    chat = [q1, a1, q2, cut, q3, a3, q4]
    split = split_for_compaction(chat, keep_turns=3, keep_budget=size(chat[3:]))
    history = [*chat, compaction("S", keep_from=chat[split])]

    loaded = repair(history)

    assert texts(model_view(loaded)) == texts(model_view(history))
    assert texts(model_view(loaded)) == [[SUMMARY_HEADING + "S", "q3"], ["a3"], ["q4"]]


def test_a_compaction_may_keep_from_the_first_message() -> None:
    # The message at index 0 is a message like any other (0 is not "not found").
    q1, a1 = user("q1"), reply("a1")
    history = [q1, a1, compaction("S", keep_from=q1), user("q2")]
    assert current_context(history).messages == [q1, a1, history[3]]
