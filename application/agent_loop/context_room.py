"""Room in the context for the next model request: compacted first when it would not fit
well."""

from application.agent_loop.parts import ModelSide, TurnOutput
from application.compaction.compactor import CompactionFailed, Compactor, NothingToCompact
from application.runtime.turn_control import TurnControl
from domain.session import Session
from domain.turn import Turn


class ContextRoom:
    """Before each model request the context's size is estimated; past the threshold (or
    when the request and its longest answer would not fit) it is compacted first.

    - Compaction that fails while the context still fits is told once and the turn goes
      on; the rest of the turn does not try (and tell) again at every request. One per
      turn, like the Prompt that holds it.
    - A context that cannot fit ends the turn, the user told why; nothing is lost.
    """

    def __init__(self, *, model: ModelSide, compactor: Compactor, output: TurnOutput) -> None:
        self._model = model
        self._compactor = compactor
        self._output = output
        self._gave_up = False  # compaction failed in this turn while the context still fitted

    async def make(
        self,
        session: Session,
        control: TurnControl,
        turn: Turn,
        thought_level: str,
        *,
        force: bool = False,
    ) -> bool:
        """Compact the context if the next request would not fit well (`force`: whatever
        the estimate says). False: it cannot fit, and the user was told why."""
        requests, meter = self._model.requests, self._model.meter
        max_tokens = requests.max_tokens(session, thought_level)
        overhead = requests.overhead(session)
        used = meter.estimate(session, overhead=overhead)
        if not force and not meter.needs_compaction(session, used, max_tokens):
            return True
        fits = meter.fits(session, used, max_tokens)
        if not force and fits and self._gave_up:
            return True  # tried once this turn; each request of a tool loop would try again
        try:
            await self._compactor.compact(session, control, turn, before=used, overhead=overhead)
            return True
        except NothingToCompact:
            problem = "there is nothing older to summarise"
        except CompactionFailed as exc:
            problem = f"compaction failed: {exc}"
        if not force and fits:
            self._gave_up = True
            text = f"\n\n[Context not compacted ({problem}); going on.]\n\n"
            await self._output.tell(session.id, text)
            return True
        await self._output.tell(
            session.id,
            f"\n\n[The conversation no longer fits in {session.model}'s context window and "
            f"{problem}. Nothing was lost: try /compact with a focus, /clear, or a model "
            "with a larger window.]\n\n",
        )
        return False
