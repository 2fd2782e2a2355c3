"""Where a compaction splits the conversation: the kept turns, the budget, the repair of a load."""

from hypothesis import given
from hypothesis import strategies as st

from domain.content import ThinkingBlock
from domain.context import (
    SUMMARY_HEADING,
    current_context,
    estimate_tokens,
    model_view,
    split_for_compaction,
)
from domain.history import repair
from domain.message import Message, Role
from tests.unit.domain.context.support import (
    _message,
    asking,
    compaction,
    reply,
    results,
    texts,
    user,
)


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
