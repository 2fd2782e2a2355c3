"""What a session is set to: its model, its mode and its other config options."""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from domain.config import THOUGHT_OPTION_ID, SessionConfig
from domain.models import ThoughtLevel
from domain.modes import ModeId


@dataclass(frozen=True, slots=True, kw_only=True)
class Choices:
    """A session's settings, stored with it (a later change of the server's defaults
    leaves them be). `config` holds the options other than mode and model, by option id;
    it is a read-only copy of what was given."""

    model: str
    mode_id: str = ModeId.DEFAULT
    config: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.model or not self.mode_id:
            raise ValueError("a session needs a model and a mode")
        # Frozen through and through: a caller's dict given here cannot change it later.
        object.__setattr__(self, "config", MappingProxyType(dict(self.config)))

    @property
    def thought_level(self) -> str:
        level = self.config.get(THOUGHT_OPTION_ID)
        return level if isinstance(level, str) else ThoughtLevel.OFF

    def as_config(self) -> SessionConfig:
        """The choices the catalogue checks options against."""
        return SessionConfig(
            mode_id=self.mode_id,
            model=self.model,
            thought_level=self.thought_level,
            options=self.config,
        )

    def with_option(self, option_id: str, value: str) -> "Choices":
        return replace(self, config={**self.config, option_id: value})
