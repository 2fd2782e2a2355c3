"""What the model sees of a stored history: over-long tool results cut, and size estimates."""

from domain.content import ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.context import (
    IMAGE_TOKENS,
    MAX_TOOL_RESULT_CHARS,
    context_estimate,
    current_context,
    estimate_tokens,
    model_view,
)
from domain.message import Role
from tests.unit.domain.context.support import (
    _message,
    asking,
    clear,
    command,
    compaction,
    output,
    reply,
    results,
    user,
)


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
