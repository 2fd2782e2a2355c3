"""What the agent knows about where it works: project instructions, skills, the environment.

Found by an adapter (files, git), rendered for the model by application/knowledge/system_prompt.py.
"""

from dataclasses import dataclass
from enum import StrEnum

INSTRUCTION_NAMES = ("AGENTS.md", "IAC-CODE.md")  # IAC-CODE.md: the reference system's name
INSTRUCTION_CAP = 32 * 1024  # characters of one instruction file the model is given
CUT_MARKER = "\n[... {cut} more characters of {path} not shown]"
GIT_STATUS_LINES = 40
LISTING_ENTRIES = 60


class InstructionScope(StrEnum):
    USER = "user"  # $IAC_CODE_CONFIG_DIR/AGENTS.md: the user's own, for every project
    PROJECT = "project"  # cwd and its parents up to the repository root
    DIRECTORY = "directory"  # a subdirectory's, added once the agent works in it


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionFile:
    path: str  # absolute
    scope: InstructionScope
    text: str  # at most INSTRUCTION_CAP characters, with CUT_MARKER when cut
    truncated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A folder with a SKILL.md: its front matter's name and description are listed for
    the model; its body is loaded on demand (load_skill, or the user's `/<name>`)."""

    name: str
    description: str
    path: str  # the SKILL.md file


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentProfile:
    """A named sub-agent a project (or the user) defines in `agents/<name>.md`: the model
    is offered it by name and description; a run of it gets `prompt` as its system prompt
    and only `tools` (built-in tool names)."""

    name: str
    description: str
    tools: tuple[str, ...]
    prompt: str
    path: str  # the <name>.md file
    model: str | None = None  # None: the calling session's model
    mode: str | None = None  # a session mode id; None: the calling session's mode


@dataclass(frozen=True, slots=True, kw_only=True)
class GitState:
    branch: str | None  # None: a detached HEAD
    status: tuple[str, ...]  # `git status --short` lines, at most GIT_STATUS_LINES
    more_status: int = 0  # lines left out
    root: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Facts sent with the first request of each turn."""

    cwd: str
    directories: tuple[str, ...]  # the session's extra directories
    platform: str  # e.g. "Linux 6.1 (x86_64)"
    shell: str  # e.g. "/bin/bash"
    date: str  # ISO YYYY-MM-DD
    git: GitState | None  # None: not a git repository
    listing: tuple[str, ...]  # cwd's top level, directories with a trailing '/'
    more_entries: int = 0  # entries left out of the listing


@dataclass(frozen=True, slots=True, kw_only=True)
class Briefing:
    """What a turn tells the model besides the conversation: gathered once per turn."""

    instructions: tuple[InstructionFile, ...] = ()
    skills: tuple[Skill, ...] = ()
    environment: Environment | None = None
    agents: tuple[AgentProfile, ...] = ()  # the named sub-agents the `agent` tool offers
