"""What in a session's stored setup this server's configuration no longer serves as stored:
found when the session opens, told to the user (a notice), never an error."""

from dataclasses import dataclass

from domain.config import Catalog, SessionConfig
from domain.sandbox import SANDBOX_OPTION_ID, SandboxRules


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupProblem:
    setting: str  # "mode", "model" or "sandbox"
    stored: str  # what the session had
    title: str
    description: str


def setup_problems(catalog: Catalog, config: SessionConfig) -> tuple[SetupProblem, ...]:
    problems: list[SetupProblem] = []
    mode = catalog.usable_mode(config.mode_id)
    if mode != config.mode_id:
        problems.append(
            SetupProblem(
                setting="mode",
                stored=config.mode_id,
                title=f"Mode '{config.mode_id}' is not offered here: the session runs in '{mode}'",
                description=(
                    "This server's configuration no longer offers the session's mode (e.g. "
                    "the operator withdrew it), so it opened in the default mode."
                ),
            )
        )
    offered = [m.id for m in catalog.models]
    if offered and config.model not in offered:
        problems.append(
            SetupProblem(
                setting="model",
                stored=config.model,
                title=f"Model '{config.model}' is not offered by this server",
                description=(
                    "The session's model is not among those configured here; its requests "
                    f"may fail. Offered: {', '.join(offered)}."
                ),
            )
        )
    if catalog.sandbox is not None:
        problems.extend(_sandbox_problems(catalog.sandbox, config))
    return tuple(problems)


def _sandbox_problems(rules: SandboxRules, config: SessionConfig) -> list[SetupProblem]:
    stored = config.options.get(SANDBOX_OPTION_ID)
    if not rules.available:
        return [
            SetupProblem(
                setting="sandbox",
                stored=str(stored or rules.default),
                title="No sandbox here: commands run with all of the server's rights",
                description=(
                    "This machine cannot confine the agent's commands (no bubblewrap, and no "
                    "Landlock in its kernel): an approved command can read and write whatever "
                    "the server can. Install the `bubblewrap` package to confine them."
                ),
            )
        ]
    level = rules.level_of(config.options)
    if isinstance(stored, str) and stored != level:
        return [
            SetupProblem(
                setting="sandbox",
                stored=stored,
                title=f"Sandbox '{stored}' is not allowed here: commands run '{level}'",
                description=(
                    "This server's ceiling for the sandbox is below the session's choice "
                    f"(the operator allows at most '{rules.ceiling}')."
                ),
            )
        ]
    return []
