from dataclasses import dataclass

from application.ports.llm import ModelRequest
from application.use_cases.context_meter import overhead
from application.use_cases.tool_phase import ToolPhase
from domain.config import Catalog
from domain.context import model_view
from domain.modes import ModeId
from domain.session import Session


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnLimits:
    max_turn_requests: int = 50
    max_tokens: int = 8192


PLAN_MODE_PROMPT = (
    "\n\nThe session is in plan mode. You may read and search, but you must not change "
    "files or run commands: write_file, edit_file and bash are refused. Study the task, then "
    "end with a concise, step-by-step plan that names the files to change, and call "
    "exit_plan_mode with it to ask the user to approve it."
)

KEEP_A_PLAN_PROMPT = (
    "\n\nFor multi-step work (three or more steps, or several tasks at once), keep a plan "
    "with todo_write: write it before you start, keep one task in_progress at a time, mark "
    "each completed as soon as it is done, and send the whole list every time."
)


def default_system_prompt(session: Session, mode: str = ModeId.DEFAULT) -> str:
    prompt = (
        "You are iac-code, an AI coding agent working with a developer through their editor.\n"
        f"The working directory of this session is {session.cwd}.\n"
        "Be precise and concise; say what you did and what you did not do."
    ) + KEEP_A_PLAN_PROMPT
    return prompt + PLAN_MODE_PROMPT if mode == ModeId.PLAN else prompt


class RequestBuilder:
    """The next model request of a session, for its current model, mode and context."""

    def __init__(self, *, catalog: Catalog, tools: ToolPhase, limits: TurnLimits) -> None:
        self._catalog = catalog
        self._tools = tools
        self.limits = limits

    def build(self, session: Session, thought_level: str) -> ModelRequest:
        model = self._catalog.model(session.model)
        thinking = model.thinking_plan(thought_level, self.limits.max_tokens)
        return ModelRequest(
            model=session.model,
            system=default_system_prompt(session, self._tools.mode_of(session)),
            # A model that cannot read images gets each one as its `[image: …]` marker.
            messages=tuple(model_view(session.messages, images=model.images)),
            max_tokens=thinking.max_tokens,
            thinking_budget=thinking.budget,
            reasoning_effort=model.effort(thought_level),
            tools=self._tools.definitions(session) if model.tools else (),
        )

    def max_tokens(self, session: Session, thought_level: str) -> int:
        """The longest answer a request may get (thinking included)."""
        model = self._catalog.model(session.model)
        return model.thinking_plan(thought_level, self.limits.max_tokens).max_tokens

    def overhead(self, session: Session) -> int:
        """Tokens the session's requests spend on instructions and tool definitions."""
        system = default_system_prompt(session, self._tools.mode_of(session))
        return overhead(system, self._tools.definitions(session))
