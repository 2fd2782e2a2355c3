"""Finding skills: <cwd>/.iac-code/skills/<folder>/SKILL.md, then the user's own under
$IAC_CODE_CONFIG_DIR/skills/; a project's skill wins over the user's of the same name."""

import logging
import os

from adapters.knowledge.files import capped, first_by_name, read_text_file
from adapters.knowledge.skill_files import SKILL_FILE, SkillFileError, skill_body, skill_header
from application.ports.knowledge import SkillNotFound
from domain.knowledge import Skill

log = logging.getLogger(__name__)


def skill_directories(cwd: str, config_dir: str) -> tuple[str, str]:
    return os.path.join(cwd, ".iac-code", "skills"), os.path.join(config_dir, "skills")


def find_skills(directories: tuple[str, ...]) -> tuple[Skill, ...]:
    return first_by_name(directories, _skills_in, "skill")


def _skills_in(directory: str) -> list[Skill]:
    try:
        folders = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    except OSError:  # no such directory (the usual case), or not readable
        return []
    skills = (_skill(os.path.join(directory, folder, SKILL_FILE), folder) for folder in folders)
    return [skill for skill in skills if skill is not None]


def _skill(path: str, folder: str) -> Skill | None:
    read = read_text_file(path)
    if read is None:
        return None
    try:
        header = skill_header(read.text, folder)
    except SkillFileError as error:
        log.warning("skill %s left out: %s", path, error)
        return None
    return Skill(name=header.name, description=header.description, path=path)


def read_skill_body(skill: Skill) -> str:
    read = read_text_file(skill.path)
    if read is None:
        raise SkillNotFound(f"skill {skill.name!r} is gone: {skill.path} cannot be read")
    return capped(skill_body(read.text), read.unread, skill.path)[0]
