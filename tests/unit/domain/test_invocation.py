"""A prompt read once as a slash command: the value every reader of it shares."""

from hypothesis import given
from hypothesis import strategies as st

from domain.commands import Invocation, invocation_in, parse_command, unescape
from domain.content import ImageBlock, TextBlock, UserInputBlock

KNOWN = frozenset({"compact", "help", "mcp__docs__review"})
IMAGE = ImageBlock(mime_type="image/png", uri="file:///a.png")

# Text that often looks like a command: slashes, known names, whitespace of every kind.
_pieces = st.sampled_from(["/", "//", "help", "compact", "mcp__docs__review", "x", " ", "\n"])
texts = st.one_of(st.text(), st.lists(_pieces, max_size=6).map("".join))
# A command's name never starts with "/" (it could not be typed: see prompt_commands).
names = st.text(min_size=1).filter(lambda n: not n.startswith("/"))
known_sets = st.one_of(st.just(KNOWN), st.frozensets(names, max_size=4))


def prompt(*blocks: UserInputBlock) -> tuple[UserInputBlock, ...]:
    return blocks


@given(texts, known_sets)
def test_its_call_is_what_parsing_the_text_against_the_names_finds(
    text: str, known: frozenset[str]
) -> None:
    invocation = invocation_in(prompt(TextBlock(text=text)))
    call = invocation.call(known) if invocation is not None else None
    assert call == parse_command(text, known)


@given(texts, known_sets)
def test_unescaping_it_is_unescaping_the_text(text: str, known: frozenset[str]) -> None:
    blocks = prompt(IMAGE, TextBlock(text=text))
    invocation = invocation_in(blocks)
    unescaped = invocation.unescaped(known) if invocation is not None else blocks
    assert unescaped == (IMAGE, TextBlock(text=unescape(text, known)))


def test_the_first_text_block_is_read_wherever_it_is() -> None:
    blocks = prompt(IMAGE, TextBlock(text="/compact the parser"), TextBlock(text="/help"))
    invocation = invocation_in(blocks)
    assert invocation is not None
    assert invocation == Invocation(
        name="compact", argument="the parser", escaped=False, blocks=blocks, at=1
    )
    assert invocation.text == "/compact the parser"


def test_a_prompt_without_a_slash_or_without_text_is_no_invocation() -> None:
    assert invocation_in(prompt(TextBlock(text="explain /help"))) is None
    assert invocation_in(prompt(IMAGE)) is None
    assert invocation_in(prompt()) is None


def test_a_doubled_slash_calls_nothing_and_reaches_the_model_with_one() -> None:
    blocks = prompt(TextBlock(text="//help me"), IMAGE)
    invocation = invocation_in(blocks)
    assert invocation is not None and invocation.escaped
    assert invocation.call(KNOWN) is None
    assert invocation.unescaped(KNOWN) == (TextBlock(text="/help me"), IMAGE)
    assert invocation.unescaped(frozenset()) == blocks  # not a command: left as typed


def test_its_text_replaced_keeps_the_other_blocks_in_place() -> None:
    blocks = prompt(IMAGE, TextBlock(text="/init"), IMAGE)
    invocation = invocation_in(blocks)
    assert invocation is not None
    assert invocation.with_text("Write an AGENTS.md") == (
        IMAGE,
        TextBlock(text="Write an AGENTS.md"),
        IMAGE,
    )
