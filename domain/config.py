"""Session settings the client can see and change: mode, model and thought level.

Each is a `select` config option; the mode is also ACP's mode (two doors, one setting)."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from domain.errors import InvalidConfigValue, UnknownConfigOption, UnknownMode
from domain.models import LEVEL_NAMES, ModelInfo, ThoughtLevel
from domain.modes import DEFAULT_MODE, Mode
from domain.sandbox import (
    LEVEL_DESCRIPTIONS,
    NETWORK_DESCRIPTIONS,
    NETWORK_OPTION_ID,
    SANDBOX_OPTION_ID,
    UNCONFINED,
    SandboxPolicy,
    SandboxRules,
)

MODE_OPTION_ID = "mode"
MODEL_OPTION_ID = "model"
THOUGHT_OPTION_ID = "thought_level"


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


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionConfig:
    """One session's choices."""

    mode_id: str
    model: str
    thought_level: str
    options: Mapping[str, object] = field(default_factory=dict)  # the others, by option id


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """What this server offers every session: its modes and its provider's models."""

    modes: tuple[Mode, ...]
    models: tuple[ModelInfo, ...]
    default_mode: str = DEFAULT_MODE.id
    default_thought_level: str = ThoughtLevel.OFF
    # What a model the catalogue does not list is assumed to do (the provider's norm).
    unknown_thinks: bool = True
    unknown_reads_images: bool = True
    # The server's sandbox terms; None: this server offers no sandbox options (its
    # commands run unconfined, as before sandboxes: tests that build a bare catalogue).
    sandbox: SandboxRules | None = None

    def sandbox_policy(self, current: SessionConfig) -> SandboxPolicy:
        """What the session's next command runs under (unconfined where none is offered)."""
        if self.sandbox is None:
            return UNCONFINED
        return self.sandbox.policy(current.options, current.mode_id)

    def model(self, model_id: str) -> ModelInfo:
        known = next((m for m in self.models if m.id == model_id), None)
        return known or ModelInfo(
            id=model_id,
            name=model_id,
            thinking=self.unknown_thinks,
            images=self.unknown_reads_images,
        )

    def usable_mode(self, mode_id: str) -> str:
        """A stored mode this server no longer offers (e.g. "don't ask" after the operator
        withdrew it) opens as the default mode."""
        offered = {m.id for m in self.modes}
        return mode_id if mode_id in offered else self.default_mode

    def check_mode(self, mode_id: object) -> str:
        offered = [m.id for m in self.modes]
        if not isinstance(mode_id, str) or mode_id not in offered:
            raise UnknownMode(f"Unknown mode {mode_id!r}.", modeId=mode_id, available=offered)
        return mode_id

    def check_option(self, option_id: str, value: object, current: SessionConfig) -> str:
        """The value, if `option_id` may take it for a session with `current` settings."""
        if option_id == MODE_OPTION_ID:
            allowed = [m.id for m in self.modes]
        elif option_id == MODEL_OPTION_ID:
            allowed = [c.value for c in self._model_choices(current.model)]
        elif option_id == THOUGHT_OPTION_ID and self.model(current.model).thinking:
            allowed = list(ThoughtLevel)
        elif option_id == SANDBOX_OPTION_ID and self.sandbox is not None:
            allowed = list(self.sandbox.levels())
        elif option_id == NETWORK_OPTION_ID and self.sandbox is not None:
            allowed = list(self.sandbox.networks())
        else:
            raise UnknownConfigOption(
                f"Unknown configuration option {option_id!r}.",
                configId=option_id,
                available=[o.id for o in self.options_for(current)],
            )
        if not isinstance(value, str) or value not in allowed:
            raise InvalidConfigValue(
                f"{value!r} is not a value of the option {option_id!r}.",
                configId=option_id,
                value=value,
                allowed=allowed,
            )
        return value

    def options_for(self, settings: SessionConfig) -> tuple[SelectOption, ...]:
        options = [
            SelectOption(
                id=MODE_OPTION_ID,
                name="Mode",
                category="mode",
                current_value=self.usable_mode(settings.mode_id),
                choices=tuple(
                    Choice(value=m.id, name=m.name, description=m.description) for m in self.modes
                ),
                description="How much the agent may do without asking.",
            ),
            SelectOption(
                id=MODEL_OPTION_ID,
                name="Model",
                category="model",
                current_value=settings.model,
                choices=self._model_choices(settings.model),
                description="The model that answers the next request.",
            ),
        ]
        model = self.model(settings.model)
        if model.thinking:  # a model that cannot think gets no thinking option
            level = (
                settings.thought_level if settings.thought_level in list(ThoughtLevel) else "off"
            )
            options.append(
                SelectOption(
                    id=THOUGHT_OPTION_ID,
                    name="Thinking",
                    category="thought_level",
                    current_value=level,
                    choices=tuple(Choice(value=v, name=LEVEL_NAMES[v]) for v in model.levels),
                    description="How much the model thinks first (from the next prompt on).",
                )
            )
        if self.sandbox is not None:
            options.extend(_sandbox_options(self.sandbox, settings.options))
        return tuple(options)

    def _model_choices(self, current: str) -> tuple[Choice, ...]:
        choices = tuple(
            Choice(value=m.id, name=m.name, description=m.description) for m in self.models
        )
        if current not in {c.value for c in choices}:
            # A stored session may name a model no longer offered; keep it selectable.
            choices = (Choice(value=current, name=current), *choices)
        return choices


def _sandbox_options(rules: SandboxRules, chosen: Mapping[str, object]) -> list[SelectOption]:
    levels = rules.levels()
    return [
        SelectOption(
            id=SANDBOX_OPTION_ID,
            name="Sandbox",
            category=None,
            current_value=rules.level_of(chosen),
            choices=tuple(
                Choice(value=v, name=v, description=LEVEL_DESCRIPTIONS[v]) for v in levels
            ),
            description="What the agent's commands may touch (plan mode: read-only)."
            if rules.available
            else "This machine cannot confine commands: they run with the server's rights.",
        ),
        SelectOption(
            id=NETWORK_OPTION_ID,
            name="Network",
            category=None,
            current_value=rules.network_of(chosen),
            choices=tuple(
                Choice(value=v, name=v, description=NETWORK_DESCRIPTIONS[v])
                for v in rules.networks()
            ),
            description="What the agent's sandboxed commands may reach.",
        ),
    ]
