"""A turn the agent starts itself: a background task ended while its session was idle, and
the model is to react to it (a failed build, say). Only with IAC_CODE_TASK_FOLLOW_UP=1."""

import logging

from application.errors import ApplicationError
from application.runtime.registry import SessionRegistry
from application.turn.prompt import Prompt, PromptRequest
from domain.content import TextBlock
from domain.errors import DomainError

log = logging.getLogger(__name__)


class TaskFollowUp:
    def __init__(self, *, prompt: Prompt, registry: SessionRegistry) -> None:
        self._prompt = prompt
        self._registry = registry

    async def run(self, session_id: str, text: str) -> None:
        """A turn with `text` as its prompt, if the session is open (a client follows it)
        and idle; else nothing: the model sees its tasks with its next turn anyway."""
        active = self._registry.find(session_id)
        if active is None or active.busy:
            return
        request = PromptRequest(session_id=session_id, content=(TextBlock(text=text),))
        try:
            await self._prompt.execute(request)
        except (ApplicationError, DomainError) as exc:  # busy meanwhile, no key, closed...
            log.info("no follow-up turn for session %s: %s", session_id, exc)
        except Exception:  # nobody awaits this turn: its failure is logged, not lost
            log.exception("the follow-up turn of session %s failed", session_id)
