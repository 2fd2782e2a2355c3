"""Session settings the client can see and change: the mode and the model."""

from dataclasses import dataclass

from domain.errors import InvalidConfigValue, UnknownConfigOption, UnknownMode

MODEL_OPTION_ID = "model"


@dataclass(frozen=True, slots=True, kw_only=True)
class Mode:
    id: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    value: str
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectOption:
    id: str
    name: str
    category: str | None
    current_value: str
    choices: tuple[Choice, ...]
    description: str | None = None


DEFAULT_MODE = Mode(
    id="default", name="Default", description="Ask before any tool that writes or executes."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """What this server offers every session: its modes and its models."""

    modes: tuple[Mode, ...]
    models: tuple[Choice, ...]

    def check_mode(self, mode_id: str) -> None:
        if mode_id not in {m.id for m in self.modes}:
            raise UnknownMode(
                f"Unknown mode {mode_id!r}.", modeId=mode_id, available=[m.id for m in self.modes]
            )

    def check_option(self, option_id: str, value: object) -> str:
        if option_id != MODEL_OPTION_ID:
            raise UnknownConfigOption(
                f"Unknown configuration option {option_id!r}.",
                configId=option_id,
                available=[MODEL_OPTION_ID],
            )
        allowed = [c.value for c in self.models]
        if not isinstance(value, str) or value not in allowed:
            raise InvalidConfigValue(
                f"{value!r} is not a model this server offers.",
                configId=option_id,
                value=value,
                allowed=allowed,
            )
        return value

    def options_for(self, model: str) -> tuple[SelectOption, ...]:
        choices = self.models
        if model not in {c.value for c in choices}:
            # A stored session may name a model no longer offered; keep it selectable.
            choices = (Choice(value=model, name=model), *choices)
        return (
            SelectOption(
                id=MODEL_OPTION_ID,
                name="Model",
                category="model",
                current_value=model,
                choices=choices,
                description="The model that answers the next request.",
            ),
        )
