"""Slash commands as the user types them: `/name argument`. Which names exist is the
application's registry; this module only reads a prompt's text."""

from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSpec:
    """A command as the client lists it: `hint` names its argument, if it takes one."""

    name: str
    description: str
    hint: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandCall:
    name: str
    argument: str  # the rest of the prompt's first text block, trimmed


def parse_command(text: str, known: Collection[str]) -> CommandCall | None:
    """The command a prompt's first text block calls, or None when it is not one.

    Only a known name counts: clients send paths and regexes that start with "/", and
    those go to the model unchanged."""
    body = text[1:] if text.startswith("/") else ""
    if not body or body[0].isspace():
        return None
    # The name ends at any whitespace: a space, a tab, or a line break of any platform.
    name, *rest = body.split(maxsplit=1)
    if name not in known:
        return None
    return CommandCall(name=name, argument=rest[0].strip() if rest else "")


def unescape(text: str, known: Collection[str]) -> str:
    """`//name …` is how a user sends `/name …` to the model when `name` is a command.
    Anything else starting with `//` (a code comment, say) is left as it is."""
    if text.startswith("//") and parse_command(text[1:], known) is not None:
        return text[1:]
    return text
