"""What the model is told before the conversation, per agent: a session's own prompt here,
a sub-agent's in application.subagents."""

from abc import abstractmethod
from typing import Protocol

from application.knowledge.system_prompt import system_prompt
from application.ports.tools import ToolDefinition
from application.runtime.registry import SessionRegistry
from domain.config import Catalog
from domain.knowledge import Briefing
from domain.session import Session


class SystemPrompt(Protocol):
    @abstractmethod
    def system(self, session: Session, tools: tuple[ToolDefinition, ...]) -> str:
        """The system prompt of the session's next request, which offers `tools`."""


class SessionPrompt(SystemPrompt):
    """The main agent's prompt from the template, for the session's current mode, with the
    project's instructions and skills of its current turn (its briefing) and the prompt the
    client gave."""

    def __init__(self, *, catalog: Catalog, registry: SessionRegistry) -> None:
        self._catalog = catalog
        self._registry = registry

    def system(self, session: Session, tools: tuple[ToolDefinition, ...]) -> str:
        active = self._registry.find(session.id)
        briefing = active.briefing if active is not None else Briefing()
        return system_prompt(
            cwd=session.cwd,
            mode=self._catalog.usable_mode(session.mode_id),
            tools=[tool.name for tool in tools],
            instructions=briefing.instructions,
            skills=briefing.skills,
            client=session.system_prompt,
        )
