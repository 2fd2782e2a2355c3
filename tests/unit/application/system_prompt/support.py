"""Tools, instruction files, skills and renderers the system prompt tests share."""

from application.knowledge.system_prompt import system_prompt
from domain.knowledge import (
    Environment,
    GitState,
    InstructionFile,
    InstructionScope,
    Skill,
)
from domain.modes import ModeId

ALL_TOOLS = frozenset(
    {
        "read_file",
        "list_files",
        "glob",
        "grep",
        "web_fetch",
        "write_file",
        "edit_file",
        "bash",
        "agent",
        "todo_write",
        "exit_plan_mode",
        "load_skill",
    }
)
USER_FILE = InstructionFile(
    path="/home/dev/.config/iac-code/AGENTS.md",
    scope=InstructionScope.USER,
    text="Answer in British English.\n",
)
ROOT_FILE = InstructionFile(
    path="/repo/AGENTS.md", scope=InstructionScope.PROJECT, text="Run `make test`.\n"
)
INNER_FILE = InstructionFile(
    path="/repo/app/IAC-CODE.md", scope=InstructionScope.PROJECT, text="Use tabs in app/.\n"
)
SKILLS = (
    Skill(name="release", description="Cut a release of the package.", path="/s/release.md"),
    Skill(name="triage", description="Sort new issues by area.", path="/s/triage.md"),
)


def render(
    *,
    mode: str = ModeId.DEFAULT,
    tools: frozenset[str] = ALL_TOOLS,
    instructions: tuple[InstructionFile, ...] = (),
    skills: tuple[Skill, ...] = (),
) -> str:
    return system_prompt(
        cwd="/repo/app", mode=mode, tools=tools, instructions=instructions, skills=skills
    )


def environment(**changes: object) -> Environment:
    fields: dict[str, object] = {
        "cwd": "/repo/app",
        "directories": (),
        "platform": "Linux 6.1 (x86_64)",
        "shell": "/bin/bash",
        "date": "2025-03-14",
        "git": GitState(branch="main", status=(), root="/repo"),
        "listing": ("src/", "README.md"),
    }
    fields.update(changes)
    return Environment(**fields)  # type: ignore[arg-type]
