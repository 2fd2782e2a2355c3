"""Commands that change the session's settings: /rename, /model and /mode."""

from application.errors import ApplicationError
from application.runtime.command_registry import CommandInput
from application.sessions.rename import RenameSession
from application.sessions.settings import ChangeSettings
from domain.commands import CommandSpec
from domain.config import MODE_OPTION_ID, MODEL_OPTION_ID, Catalog
from domain.errors import DomainError


class RenameCommand:
    spec = CommandSpec(name="rename", description="Give the session a new title", hint="title")

    def __init__(self, *, rename: RenameSession) -> None:
        self._rename = rename

    async def run(self, command: CommandInput) -> str:
        if not command.argument:
            return "Usage: /rename <title>"
        try:
            title = await self._rename.execute(command.session.id, command.argument)
        except DomainError as exc:
            return f"Not renamed: {exc}"
        return f"Renamed the session to “{title}”."


class _OptionCommand:
    """Sets one config option, exactly as `session/set_config_option` does."""

    option_id: str
    label: str

    def __init__(self, *, settings: ChangeSettings, catalog: Catalog) -> None:
        self._settings = settings
        self._catalog = catalog

    async def run(self, command: CommandInput) -> str:
        session = command.session
        option = next(
            o for o in self._catalog.options_for(session.settings) if o.id == self.option_id
        )
        if not command.argument:
            return self._choices(option.current_value, [(c.value, c.name) for c in option.choices])
        try:
            state = await self._settings.option(session, self.option_id, command.argument)
        except (ApplicationError, DomainError) as exc:
            return f"{exc}\n\n" + self._choices(
                option.current_value, [(c.value, c.name) for c in option.choices]
            )
        current = next(o for o in state.options if o.id == self.option_id)
        name = next(c.name for c in current.choices if c.value == current.current_value)
        return f"The {self.label} is now {name} ({current.current_value})."

    def _choices(self, current: str, choices: list[tuple[str, str]]) -> str:
        lines = [f"The {self.label} is {current}. Choices:"]
        lines += [
            f"- `{value}`: {name}" + (" (current)" if value == current else "")
            for value, name in choices
        ]
        return "\n".join(lines)


class ModelCommand(_OptionCommand):
    spec = CommandSpec(name="model", description="Switch the session's model", hint="model id")
    option_id = MODEL_OPTION_ID
    label = "model"


class ModeCommand(_OptionCommand):
    spec = CommandSpec(
        name="mode",
        description="Switch the session's mode (what the agent may do unasked)",
        hint="mode id",
    )
    option_id = MODE_OPTION_ID
    label = "mode"
