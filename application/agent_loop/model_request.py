from dataclasses import dataclass

from application.agent_loop.system_prompts import SystemPrompt
from application.compaction.context_meter import overhead
from application.ports.llm import ModelRequest
from application.tools.toolbox import Toolbox
from domain.config import Catalog
from domain.context import model_view
from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnLimits:
    max_turn_requests: int = 50
    max_tokens: int = 8192


class RequestBuilder:
    """The next model request of a session, for its current model and context: the agent's
    tools (Toolbox) and what it is told of them and its task (SystemPrompt)."""

    def __init__(
        self, *, catalog: Catalog, tools: Toolbox, limits: TurnLimits, prompt: SystemPrompt
    ) -> None:
        self._catalog = catalog
        self._tools = tools
        self.limits = limits
        self._prompt = prompt

    def build(self, session: Session, thought_level: str) -> ModelRequest:
        model = self._catalog.model(session.model)
        thinking = model.thinking_plan(thought_level, self.limits.max_tokens)
        tools = self._tools.definitions(session)
        return ModelRequest(
            model=session.model,
            system=self._prompt.system(session, tools),
            # A model that cannot read images gets each one as its `[image: …]` marker.
            messages=tuple(model_view(session.messages, images=model.images)),
            max_tokens=thinking.max_tokens,
            thinking_budget=thinking.budget,
            reasoning_effort=model.effort(thought_level),
            tools=tools if model.tools else (),
        )

    def max_tokens(self, session: Session, thought_level: str) -> int:
        """The longest answer a request may get (thinking included)."""
        model = self._catalog.model(session.model)
        return model.thinking_plan(thought_level, self.limits.max_tokens).max_tokens

    def overhead(self, session: Session) -> int:
        """Tokens the session's requests spend on instructions and tool definitions."""
        tools = self._tools.definitions(session)
        return overhead(self._prompt.system(session, tools), tools)
