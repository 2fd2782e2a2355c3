"""A Briefer for a world whose model is told nothing about the project: no instructions,
skills, named agents or environment, and no project commands (/init, skills). The tests
that read the exact requests a model gets, or the exact command list, run in such a world;
the briefed ones use the real Briefer over a FakeKnowledge."""

from application.knowledge.briefing import Briefer
from application.knowledge.shared import SharedKnowledge
from application.runtime.registry import ActiveSession
from domain.commands import CommandCall, CommandSpec, Invocation
from domain.knowledge import Briefing
from tests.fakes.knowledge import FakeKnowledge


class UnbriefedBriefer(Briefer):
    def __init__(self) -> None:
        super().__init__(knowledge=FakeKnowledge(), shared=SharedKnowledge())

    async def gather(self, active: ActiveSession, *, environment: bool = True) -> Briefing:
        active.briefing = Briefing()
        return active.briefing

    def offered(self, active: ActiveSession, taken: frozenset[str]) -> tuple[CommandSpec, ...]:
        return ()

    def call_in(
        self, active: ActiveSession, invocation: Invocation, taken: frozenset[str]
    ) -> CommandCall | None:
        return None
