"""Slash commands as the user types them: `/name argument`. Which names exist is the
application's registry; this module only reads a prompt's text."""

from collections.abc import Collection
from dataclasses import dataclass

from domain.content import TextBlock, UserInputBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSpec:
    """A command as the client lists it: `hint` names its argument, if it takes one."""

    name: str
    description: str
    hint: str | None = None
    # False: neither the prompt that calls it nor its answer is stored in the history (a
    # command that rewrites the history itself, /rewind, would otherwise sit inside it).
    stored: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandCall:
    name: str
    argument: str  # the rest of the prompt's first text block, trimmed


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """A prompt whose first text block reads `/name argument`, read once. Whether `name`
    is a command depends on who asks (the built-in commands, the MCP prompts, the project's
    skills): any other name reaches the model as typed."""

    name: str
    argument: str  # the rest of the block, trimmed
    # Typed `//name …`: how a user sends `/name …` to the model when `name` is a command.
    escaped: bool
    blocks: tuple[UserInputBlock, ...]  # the whole prompt
    at: int  # where its first text block is in `blocks`

    @property
    def text(self) -> str:
        """The first text block as the user typed it."""
        block = self.blocks[self.at]
        assert isinstance(block, TextBlock)
        return block.text

    def call(self, known: Collection[str]) -> CommandCall | None:
        """The call of one of the `known` commands this is, or None."""
        if self.escaped or self.name not in known:
            return None
        return CommandCall(name=self.name, argument=self.argument)

    def unescaped(self, known: Collection[str]) -> tuple[UserInputBlock, ...]:
        """The prompt as the model gets it: `//name …` as `/name …` when `name` is known."""
        if not self.escaped or self.name not in known:
            return self.blocks
        return self.with_text(self.text[1:])

    def with_text(self, text: str) -> tuple[UserInputBlock, ...]:
        """The prompt with its first text block replaced (by what a command stands for)."""
        return (*self.blocks[: self.at], TextBlock(text=text), *self.blocks[self.at + 1 :])


def invocation_in(blocks: tuple[UserInputBlock, ...]) -> Invocation | None:
    """The prompt's first text block read as `/name …` or `//name …`, or None when it
    reads as neither."""
    at = next((i for i, b in enumerate(blocks) if isinstance(b, TextBlock)), None)
    if at is None:
        return None
    block = blocks[at]
    assert isinstance(block, TextBlock)
    escaped = block.text.startswith("//")
    call = _read(block.text[1:] if escaped else block.text)
    if call is None:
        return None
    return Invocation(name=call.name, argument=call.argument, escaped=escaped, blocks=blocks, at=at)


def _read(text: str) -> CommandCall | None:
    """`/name argument` for any name."""
    body = text[1:] if text.startswith("/") else ""
    if not body or body[0].isspace():
        return None
    # The name ends at any whitespace: a space, a tab, or a line break of any platform.
    name, *rest = body.split(maxsplit=1)
    return CommandCall(name=name, argument=rest[0].strip() if rest else "")


def parse_command(text: str, known: Collection[str]) -> CommandCall | None:
    """The command a prompt's first text block calls, or None when it is not one.

    Only a known name counts: clients send paths and regexes that start with "/", and
    those go to the model unchanged."""
    call = _read(text)
    return call if call is not None and call.name in known else None


def unescape(text: str, known: Collection[str]) -> str:
    """`//name …` is how a user sends `/name …` to the model when `name` is a command.
    Anything else starting with `//` (a code comment, say) is left as it is."""
    if text.startswith("//") and parse_command(text[1:], known) is not None:
        return text[1:]
    return text
