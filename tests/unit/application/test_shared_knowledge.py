"""One copy of a project's instructions and skills across its sessions."""

from dataclasses import replace

from application.knowledge.shared import SharedKnowledge
from domain.knowledge import InstructionFile, InstructionScope, Skill

RULES = InstructionFile(path="/p/AGENTS.md", scope=InstructionScope.PROJECT, text="Be brief.")
SKILL = Skill(name="notes", description="Release notes.", path="/p/.iac-code/notes/SKILL.md")


def copies() -> tuple[tuple[InstructionFile, ...], tuple[Skill, ...]]:
    """What a fresh read returns: equal to the last, but other objects."""
    return (replace(RULES),), (replace(SKILL),)


def test_an_equal_read_is_swapped_for_the_copy_held() -> None:
    shared = SharedKnowledge()
    first = shared.one_copy("/p", *copies())
    second = shared.one_copy("/p", *copies())
    assert second[0] is first[0] and second[1] is first[1]


def test_a_changed_part_is_returned_and_held_from_then_on() -> None:
    shared = SharedKnowledge()
    first = shared.one_copy("/p", *copies())
    edited = (replace(RULES, text="Be thorough."),)
    instructions, skills = shared.one_copy("/p", edited, copies()[1])
    assert instructions is edited and skills is first[1]
    assert shared.one_copy("/p", (replace(edited[0]),), ())[0] is edited
    assert shared.one_copy("/p", *copies())[0] == (RULES,)  # and back again


def test_projects_are_held_apart() -> None:
    shared = SharedKnowledge()
    in_p = shared.one_copy("/p", *copies())
    in_q = shared.one_copy("/q", *copies())
    assert in_q[0] == in_p[0] and in_q[0] is not in_p[0]


def test_only_the_projects_used_last_are_remembered() -> None:
    shared = SharedKnowledge(size=2)
    kept = shared.one_copy("/p", *copies())
    in_q = shared.one_copy("/q", *copies())
    shared.one_copy("/p", *copies())  # /p used again: /q is now the oldest
    shared.one_copy("/r", *copies())
    assert shared.one_copy("/p", *copies())[0] is kept[0]
    assert shared.one_copy("/q", *copies())[0] is not in_q[0]  # /q was let go
