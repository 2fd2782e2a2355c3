"""Edit a sent prompt: a rewind to it, then the new prompt on the cut history, as one
operation (no other prompt can start between them)."""

from application.dto import PromptResult
from application.rewind.rewind import RestoreFiles, RewindSession
from application.runtime.registry import SessionRegistry
from application.runtime.turn_control import TurnControl
from application.turn.prompt import Prompt, PromptRequest
from domain.content import UserInputBlock


class EditPrompt:
    def __init__(self, *, rewind: RewindSession, prompt: Prompt, registry: SessionRegistry) -> None:
        self._rewind = rewind
        self._prompt = prompt
        self._registry = registry

    async def execute(
        self,
        session_id: str,
        message_id: str,
        content: tuple[UserInputBlock, ...],
        *,
        files: RestoreFiles | None = None,
    ) -> PromptResult:
        active = self._registry.require(session_id)
        # The rewind takes the session's turn and hands it on to the prompt: a prompt that
        # arrives meanwhile is busy, as during any turn; a cancel reaches the new turn.
        control = TurnControl()
        try:
            await self._rewind.execute(session_id, message_id, hold=control, files=files)
            return await self._prompt.execute(
                PromptRequest(session_id=session_id, content=content, control=control)
            )
        finally:
            active.end_turn(control)  # already ended by the prompt, unless it never began
