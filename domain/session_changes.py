"""What a session records about its own changes, for a store to write exactly those."""

from dataclasses import dataclass
from enum import StrEnum

from domain.message import Message


class Setting(StrEnum):
    """A part of the session's own row that a change overwrites as a whole."""

    TITLE = "title"
    MODE = "mode_id"
    MODEL = "model"
    CONFIG = "config"
    WORKSPACE = "workspace"  # the extra directories and the MCP servers, opened together
    SYSTEM_PROMPT = "system_prompt"  # the client's system prompt

    @property
    def fields(self) -> tuple[str, ...]:
        """The Session attributes (and stored columns) this setting overwrites."""
        if self is Setting.WORKSPACE:
            return ("additional_directories", "mcp_servers")
        return (self.value,)


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A message appended at `position`: it conflicts only with another append there."""

    position: int
    message: Message


@dataclass(frozen=True, slots=True)
class TitleGiven:
    """A title taken from the first prompt: it yields to one set meanwhile elsewhere."""

    title: str


@dataclass(frozen=True, slots=True)
class SettingChanged:
    """A setting overwritten from what this copy knew: it conflicts with any other write
    since this copy's version."""

    setting: Setting


SessionChange = MessageAdded | TitleGiven | SettingChanged


@dataclass(frozen=True, slots=True, kw_only=True)
class TakenChanges:
    """The changes a store took to write, and what the session knew of the store when it
    took them (the version its write is checked against, the title): what a write that
    fails or is rolled back puts back (`Session.restore_changes`)."""

    changes: tuple[SessionChange, ...]
    version: int | None
    title: str | None
