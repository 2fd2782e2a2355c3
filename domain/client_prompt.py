"""The system prompt a client gives a session (ACP's `systemPrompt` on session/new, load,
resume and fork): instructions it adds after the agent's own, or puts in their place."""

from dataclasses import dataclass
from enum import StrEnum

from domain.errors import InvalidClientPrompt


class ClientPromptMode(StrEnum):
    APPEND = "append"  # after the agent's instructions and the project's
    OVERRIDE = "override"  # instead of the agent's own instructions (its safety rules stay)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientPrompt:
    """The client's text blocks, in the order it sent them."""

    mode: ClientPromptMode
    texts: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.texts:
            raise InvalidClientPrompt("A client system prompt needs at least one text block.")

    @property
    def text(self) -> str:
        """The blocks as the model reads them: one paragraph each."""
        return "\n\n".join(text.strip("\n") for text in self.texts)
