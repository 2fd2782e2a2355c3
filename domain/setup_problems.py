"""What in a session's stored setup this server's configuration no longer serves as stored:
found when the session opens, told to the user (a notice), never an error."""

from dataclasses import dataclass

from domain.config import Catalog, SessionConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupProblem:
    setting: str  # "mode" or "model"
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
    return tuple(problems)
