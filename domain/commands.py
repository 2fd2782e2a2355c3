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
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, rest = text[1:].partition(" ")
    name, newline, more = head.partition("\n")
    if name not in known:
        return None
    argument = (more + " " + rest) if newline else rest
    return CommandCall(name=name, argument=argument.strip())


def unescape(text: str) -> str:
    """`//text` is how a user sends `/text` to the model when `text` is a command's name."""
    return text[1:] if text.startswith("//") else text
