"""Permissions remembered for a project: "always allow" answers that outlive a session.

A rule covers one tool in one working directory. For `bash` it covers only commands that
start with the same program and subcommand (`git status …`), or, when the command has no
subcommand, exactly that command: "always" must not grow into "any command".
"""

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

BASH = "bash"
# Anything that makes a command more than one program with its arguments: lists, pipes,
# redirections, substitutions, subshells. Such a command is never covered by a rule.
_SHELL_SYNTAX = frozenset(";&|<>()`$\n\r")
_SUBCOMMAND = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]*")


def simple_words(command: str) -> tuple[str, ...] | None:
    """The words of a command that runs one program (no shell syntax), else None."""
    if any(c in _SHELL_SYNTAX for c in command):
        return None
    try:
        words = tuple(shlex.split(command))
    except ValueError:
        return None
    if not words or "=" in words[0]:  # an environment assignment changes what runs
        return None
    return words


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandPattern:
    """The commands a bash rule covers: those starting with `words`, or only exactly them."""

    words: tuple[str, ...]
    exact: bool

    @classmethod
    def of(cls, command: str) -> "CommandPattern | None":
        """The pattern "always allow" would remember for `command`; None if it may not."""
        words = simple_words(command)
        if words is None:
            return None
        if len(words) >= 2 and _SUBCOMMAND.fullmatch(words[1]):
            return cls(words=words[:2], exact=False)
        return cls(words=words, exact=True)

    def covers(self, command: str) -> bool:
        words = simple_words(command)
        if words is None:
            return False
        return words == self.words if self.exact else words[: len(self.words)] == self.words

    @property
    def text(self) -> str:
        joined = shlex.join(self.words)
        return joined if self.exact else f"{joined} …"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRule:
    """ "Always allow `tool_name`" in the project at `cwd` (for bash: its `command` pattern)."""

    cwd: str
    tool_name: str
    command: CommandPattern | None = None
    created_at: datetime
    session_id: str | None = None  # where it was granted
    id: int | None = None  # given by the store

    def covers(self, tool_name: str, arguments: Mapping[str, object]) -> bool:
        if tool_name != self.tool_name:
            return False
        if self.command is None:
            return tool_name != BASH  # a bash rule always names its commands
        command = arguments.get("command")
        return isinstance(command, str) and self.command.covers(command)

    @property
    def scope(self) -> str:
        """Which calls of its tool the rule lets run, in words."""
        if self.command is None:
            return "every call"
        if self.command.exact:
            return f"exactly `{self.command.text}`"
        return f"commands starting with `{self.command.text}`"

    @property
    def description(self) -> str:
        if self.command is None:
            return f"{self.tool_name} in {self.cwd}"
        return f"{self.tool_name}: {self.scope} in {self.cwd}"

    def same_grant(self, other: "ProjectRule") -> bool:
        return (self.cwd, self.tool_name, self.command) == (
            other.cwd,
            other.tool_name,
            other.command,
        )


def rule_for(
    *,
    cwd: str,
    tool_name: str,
    arguments: Mapping[str, object],
    at: datetime,
    session_id: str | None = None,
) -> ProjectRule | None:
    """The rule "always allow" would store for this call, or None when it cannot be
    remembered safely (a bash command with shell syntax, or without a command)."""
    command = None
    if tool_name == BASH:
        text = arguments.get("command")
        command = CommandPattern.of(text) if isinstance(text, str) else None
        if command is None:
            return None
    return ProjectRule(
        cwd=cwd, tool_name=tool_name, command=command, created_at=at, session_id=session_id
    )
