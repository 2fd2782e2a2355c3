"""Slash commands that expand into a prompt for the model: a skill's `/<name> [args]`, and
`/init`. Unlike the built-in commands (application/commands/), which answer the user
themselves, these start a normal model turn; the user's own words are what is stored and
replayed, the expansion is what the model sees."""

import os.path
from collections.abc import Iterable

from domain.commands import CommandSpec
from domain.knowledge import InstructionFile, Skill

ARGUMENTS = "$ARGUMENTS"  # where a skill's body wants the words typed after its name
INIT = CommandSpec(name="init", description="Write an AGENTS.md for this project")


def invocable(name: str) -> bool:
    """A name the user can type as `/<name>`: parse_command ends a name at whitespace."""
    return bool(name) and not name.startswith("/") and not any(c.isspace() for c in name)


def skill_specs(
    skills: Iterable[Skill], taken: frozenset[str] = frozenset()
) -> tuple[CommandSpec, ...]:
    """A command for each skill. A skill never shadows a built-in command or an MCP prompt
    (`taken`), nor /init: those were there first, and the model can still load the skill."""
    taken = taken | {INIT.name}
    return tuple(
        # Every skill takes words after its name: its body's $ARGUMENTS, or appended.
        CommandSpec(
            name=skill.name,
            description=skill.description or f"Skill from {skill.path}",
            hint="args",
        )
        for skill in skills
        if invocable(skill.name) and skill.name not in taken
    )


def skill_prompt(skill: Skill, body: str, argument: str) -> str:
    """What the model sees for `/<skill> argument`."""
    argument = argument.strip()
    head = f"The user invoked the skill `{skill.name}` ({skill.path}). Its instructions:"
    if ARGUMENTS in body:
        text = body.replace(ARGUMENTS, argument)
    elif argument:
        text = f"{body.rstrip()}\n\nArguments: {argument}"
    else:
        text = body
    return f"{head}\n\n{text.strip()}"


def init_prompt(cwd: str, existing: tuple[InstructionFile, ...]) -> str:
    """Asks the model to write (or improve) `<cwd>/AGENTS.md` through the normal,
    permission-checked file tools. `existing`: the instruction files the turn loaded."""
    target = os.path.join(cwd, "AGENTS.md")
    current = next((f for f in existing if _same(f.path, target)), None)
    others = [f for f in existing if f is not current]
    if current is None:
        task = f"Write `{target}` with write_file."
    else:
        task = (
            f"`{target}` exists. Improve it rather than replace it: read it, keep what is "
            "still right, fix what is wrong or out of date, add what is missing, and make the "
            "changes with edit_file."
        )
    lines = [
        "Write an AGENTS.md for this project: the instructions a coding agent reads first "
        "whenever it works here.",
        "",
        task,
        "",
        "Study the project first, with the read-only tools (README, build and package files, "
        "CI configuration, Makefile or scripts, a few representative sources and tests):",
        "- how to install, build, lint and run the tests (the whole suite and a single test);",
        "- the layout: the main directories and what each holds, the entry points;",
        "- the conventions: code style, naming, architecture rules, how tests are written, "
        "anything a newcomer would get wrong.",
        "",
        "Keep it concise and specific to this project, for coding agents rather than a "
        "human reader: short sections, commands in code blocks, no generic advice, and no "
        "command or path you have not seen in the project.",
    ]
    if others:
        lines += [
            "",
            "These instruction files are loaded too; do not repeat what they say:",
            *(f"- `{f.path}` ({f.scope})" for f in others),
        ]
    lines += ["", "When done, say in a few lines what the file covers."]
    return "\n".join(lines)


def _same(path: str, other: str) -> bool:
    return os.path.normcase(os.path.normpath(path)) == os.path.normcase(os.path.normpath(other))
