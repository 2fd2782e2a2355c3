"""/memory: what the agent is told about the project besides the conversation."""

from application.ports.knowledge import ProjectKnowledge
from application.runtime.command_registry import CommandInput
from application.runtime.registry import SessionRegistry
from domain.commands import CommandSpec
from domain.knowledge import INSTRUCTION_CAP, InstructionFile, Skill

CONFIG_DIR = "$IAC_CODE_CONFIG_DIR"


class MemoryCommand:
    spec = CommandSpec(
        name="memory", description="List the instructions and skills loaded for this session"
    )

    def __init__(
        self,
        *,
        knowledge: ProjectKnowledge,
        registry: SessionRegistry,
        config_dir: str,  # where $IAC_CODE_CONFIG_DIR points, to show it
    ) -> None:
        self._knowledge = knowledge
        self._registry = registry
        self._config_dir = config_dir

    async def run(self, command: CommandInput) -> str:
        cwd = command.session.cwd
        # Read afresh, as the next turn will: a file changed since the last turn shows.
        files = await self._knowledge.instructions(cwd)
        skills = await self._knowledge.skills(cwd)
        active = self._registry.find(command.session.id)
        nested = sorted(active.nested_loaded) if active is not None else []
        return "\n".join(
            [
                *_instructions(files, cwd, self._in_config("AGENTS.md")),
                "",
                *_nested(nested),
                "",
                *_skills(skills, self._in_config("skills/")),
            ]
        )

    def _in_config(self, name: str) -> str:
        return f"`{self._config_dir.rstrip('/')}/{name}` ({CONFIG_DIR})"


def _instructions(files: tuple[InstructionFile, ...], cwd: str, user_file: str) -> list[str]:
    where = (
        f"AGENTS.md and IAC-CODE.md in `{cwd}` and each parent up to the repository root, "
        f"and {user_file}"
    )
    if not files:
        return ["**Instructions:** none. Looked for " + where + "."]
    return [
        f"**Instructions the next turn loads** ({where}):",
        *(f"- {f.scope}: `{f.path}` ({_size(f)})" for f in files),
    ]


def _size(file: InstructionFile) -> str:
    if file.truncated:  # its text holds the cut marker: the first INSTRUCTION_CAP count
        return f"{INSTRUCTION_CAP:,} characters, cut at {INSTRUCTION_CAP // 1024} KiB"
    return f"{len(file.text):,} characters"


def _nested(paths: list[str]) -> list[str]:
    if not paths:
        return [
            "**Subdirectory instructions:** none added yet. A subdirectory's AGENTS.md is "
            "added once, when the agent reads or edits files there."
        ]
    return [
        "**Subdirectory instructions added in this session:**",
        *(f"- `{path}`" for path in paths),
    ]


def _skills(skills: tuple[Skill, ...], user_dir: str) -> list[str]:
    where = f"a folder with a SKILL.md in the project's `.iac-code/skills/` or in {user_dir}"
    if not skills:
        return [f"**Skills:** none. A skill is {where}."]
    return [
        f"**Skills** (each {where}; the agent loads one when a task needs it, or type `/<name>`):",
        *(f"- `{s.name}`: {s.description or '(no description)'}" for s in skills),
    ]
