"""Finding named sub-agents: <cwd>/.iac-code/agents/<name>.md, then the user's own under
$IAC_CODE_CONFIG_DIR/agents/; a project's agent wins over the user's of the same name.

A file is YAML front matter (description, tools, optional model and mode) and a body, the
agent's system prompt. A file that cannot be used is left out with a warning."""

import logging
import os
from typing import Any

from adapters.knowledge.files import capped, first_by_name, read_text_file
from adapters.knowledge.skill_files import (
    DESCRIPTION_CAP,
    NAME_PATTERN,
    SkillFileError,
    split_front_matter,
)
from domain.knowledge import AgentProfile
from domain.modes import ModeId
from domain.tools import AGENT_TOOLS

log = logging.getLogger(__name__)

AGENT_SUFFIX = ".md"


class AgentFileError(ValueError):
    """Why an agent file cannot be offered to the model."""


def agent_directories(cwd: str, config_dir: str) -> tuple[str, str]:
    return os.path.join(cwd, ".iac-code", "agents"), os.path.join(config_dir, "agents")


def find_agents(directories: tuple[str, ...]) -> tuple[AgentProfile, ...]:
    return first_by_name(directories, _agents_in, "agent")


def _agents_in(directory: str) -> list[AgentProfile]:
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(directory)
            if entry.is_file() and entry.name.endswith(AGENT_SUFFIX)
        )
    except OSError:  # no such directory (the usual case), or not readable
        return []
    agents = (_agent(os.path.join(directory, name)) for name in names)
    return [agent for agent in agents if agent is not None]


def _agent(path: str) -> AgentProfile | None:
    read = read_text_file(path)
    if read is None:
        return None
    try:
        agent = agent_profile(read.text, path)
    except (AgentFileError, SkillFileError) as error:
        log.warning("agent %s left out: %s", path, error)
        return None
    prompt, _ = capped(agent.prompt, read.unread, path)
    return AgentProfile(
        name=agent.name,
        description=agent.description,
        tools=agent.tools,
        prompt=prompt,
        path=path,
        model=agent.model,
        mode=agent.mode,
    )


def agent_profile(text: str, path: str) -> AgentProfile:
    """The agent a file defines, named for the file. Raises AgentFileError."""
    name = os.path.basename(path).removesuffix(AGENT_SUFFIX).lower()
    if not NAME_PATTERN.fullmatch(name):
        raise AgentFileError(
            f"file name {name!r} is not 1-64 letters, digits, '-' or '_' starting with a "
            "letter or digit"
        )
    front, body = split_front_matter(text)
    if front is None:
        raise AgentFileError("no front matter between leading '---' lines")
    fields = _parse(front)
    prompt = body.strip()
    if not prompt:
        raise AgentFileError("the body (the agent's system prompt) is empty")
    return AgentProfile(
        name=name,
        description=_description(fields.get("description")),
        tools=_tools(fields.get("tools")),
        prompt=prompt,
        path=path,
        model=_optional_text(fields.get("model"), "model"),
        mode=_mode(fields.get("mode")),
    )


def _parse(front: str) -> dict[str, Any]:
    # Imported here, when a file has front matter to read: PyYAML is ~8 ms and a few MiB
    # that a server with no agent or skill files never needs.
    import yaml  # type: ignore[import-untyped]  # no stubs: types-PyYAML is not a dependency

    try:
        fields = yaml.safe_load(front)
    except yaml.YAMLError as error:
        raise AgentFileError(
            f"front matter is not valid YAML: {str(error).splitlines()[0]}"
        ) from None
    if fields is None:
        return {}
    if not isinstance(fields, dict):
        raise AgentFileError("front matter is not a mapping of fields")
    return fields


def _description(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError("description is missing")
    description = " ".join(value.split())  # one line in the agent tool's description
    if len(description) > DESCRIPTION_CAP:
        description = description[: DESCRIPTION_CAP - 1] + "…"
    return description


def _tools(value: object) -> tuple[str, ...]:
    """A list, or one comma-separated line, of built-in tool names."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise AgentFileError("tools must name one or more tools")
    unknown = [name for name in value if name not in AGENT_TOOLS]
    if unknown:
        raise AgentFileError(
            f"tools {', '.join(unknown)} cannot be given to an agent "
            f"(it may have: {', '.join(AGENT_TOOLS)})"
        )
    return tuple(dict.fromkeys(value))


def _optional_text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError(f"{field} must be text")
    return value.strip()


def _mode(value: object) -> str | None:
    mode = _optional_text(value, "mode")
    if mode is not None and mode not in tuple(ModeId):
        raise AgentFileError(f"mode {mode!r} is not one of {', '.join(tuple(ModeId))}")
    return mode
