"""Asking the user for input through their client (ACP elicitation): a form to fill in, or
a page to visit. The model's `ask_user` tool and the session's MCP servers ask this way."""

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from domain.questions import ElicitationAction


class ElicitationMode(StrEnum):
    FORM = "form"  # the client renders a form from a JSON Schema
    URL = "url"  # the client sends the user to a page (a sign-in, say)


@dataclass(frozen=True, slots=True, kw_only=True)
class Elicitation:
    """One question to the user, tied to a session (and to a tool call, when one asks)."""

    message: str
    schema: Mapping[str, object] | None = None  # form mode: the fields asked for
    url: str | None = None  # url mode: where the user is sent
    elicitation_id: str | None = None  # url mode: named again when the step completes
    tool_call_id: str | None = None

    @property
    def mode(self) -> ElicitationMode:
        return ElicitationMode.URL if self.url is not None else ElicitationMode.FORM


@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitationAnswer:
    action: ElicitationAction
    content: Mapping[str, object] = field(default_factory=dict)  # accepted: values by field


class ElicitationUnavailable(Exception):
    """No client of the session could be asked (none supports the mode, or each answered
    with an error)."""


class Elicitor(Protocol):
    """Puts questions to the clients attached to a session."""

    @abstractmethod
    def can_ask(self, session_id: str, mode: ElicitationMode) -> bool:
        """Whether the session's controlling client advertised the mode."""

    @abstractmethod
    async def ask(self, session_id: str, elicitation: Elicitation) -> ElicitationAnswer:
        """The user's answer. Raises ElicitationUnavailable; cancelled, it withdraws the
        question from every client."""

    @abstractmethod
    async def complete(self, session_id: str, elicitation_id: str) -> None:
        """A url-mode step is done (the clients close what they opened for it)."""
