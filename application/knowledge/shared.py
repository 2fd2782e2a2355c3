"""One copy of what the sessions of one project are told: each session reads its project's
instructions and skills afresh, and they are most often what the last session of that
project read. Equal values are swapped for the copy already held, so a hundred open
sessions of one project hold one AGENTS.md between them, not a hundred."""

from collections import OrderedDict

from domain.knowledge import InstructionFile, Skill

PROJECTS_REMEMBERED = 64  # the last copies kept, by project; older ones are let go

Known = tuple[tuple[InstructionFile, ...], tuple[Skill, ...]]


class SharedKnowledge:
    def __init__(self, size: int = PROJECTS_REMEMBERED) -> None:
        self._size = size
        self._last: OrderedDict[str, Known] = OrderedDict()

    def one_copy(
        self, cwd: str, instructions: tuple[InstructionFile, ...], skills: tuple[Skill, ...]
    ) -> Known:
        """What was read, each part swapped for the equal copy held for `cwd` if there is
        one; a part that changed is the copy held from now on."""
        held = self._last.pop(cwd, None)
        if held is not None:
            instructions = held[0] if held[0] == instructions else instructions
            skills = held[1] if held[1] == skills else skills
        self._last[cwd] = instructions, skills
        while len(self._last) > self._size:
            self._last.popitem(last=False)  # the project used least recently
        return instructions, skills
