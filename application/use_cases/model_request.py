from dataclasses import dataclass

from application.ports.llm import ModelRequest
from application.ports.tools import ToolDefinition
from application.runtime import SessionRegistry
from application.system_prompt import system_prompt
from application.use_cases.context_meter import overhead
from application.use_cases.tool_catalogue import ToolCatalogue
from domain.config import Catalog
from domain.context import model_view
from domain.knowledge import Briefing
from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnLimits:
    max_turn_requests: int = 50
    max_tokens: int = 8192


class RequestBuilder:
    """The next model request of a session, for its current model, mode and context: the
    system prompt from the template, with the project's instructions and skills of the
    session's current turn (its briefing)."""

    def __init__(
        self,
        *,
        catalog: Catalog,
        tools: ToolCatalogue,
        limits: TurnLimits,
        registry: SessionRegistry | None = None,
    ) -> None:
        self._catalog = catalog
        self._tools = tools
        self.limits = limits
        self._registry = registry

    def _briefing(self, session: Session) -> Briefing:
        active = self._registry.find(session.id) if self._registry is not None else None
        return active.briefing if active is not None else Briefing()

    def system(self, session: Session, tools: tuple[ToolDefinition, ...]) -> str:
        briefing = self._briefing(session)
        return system_prompt(
            cwd=session.cwd,
            mode=self._tools.mode_of(session),
            tools=[tool.name for tool in tools],
            instructions=briefing.instructions,
            skills=briefing.skills,
            client=session.system_prompt,
        )

    def build(self, session: Session, thought_level: str) -> ModelRequest:
        model = self._catalog.model(session.model)
        thinking = model.thinking_plan(thought_level, self.limits.max_tokens)
        tools = self._tools.definitions(session)
        return ModelRequest(
            model=session.model,
            system=self.system(session, tools),
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
        return overhead(self.system(session, tools), tools)
