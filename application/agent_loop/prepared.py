"""A prompt as the agent loop takes it: made ready (application.turn.preparation) and
handed to ModelTurn."""

from dataclasses import dataclass

from domain.content import UserInputBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedPrompt:
    content: tuple[UserInputBlock, ...]  # as the model gets it
    typed: str | None = None  # the user's own words, when `content` is what they expanded into
    context: str | None = None  # the environment the turn's prompt carries to the model
