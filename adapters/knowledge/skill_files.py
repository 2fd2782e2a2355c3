"""A SKILL.md: YAML front matter between leading `---` lines (name, description), then the
instructions the model loads on demand."""

import re
from dataclasses import dataclass
from typing import Any

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
DESCRIPTION_CAP = 1024  # characters: every skill's description goes into every request

_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


class SkillFileError(ValueError):
    """Why a SKILL.md cannot be offered to the model."""


@dataclass(frozen=True, slots=True)
class SkillHeader:
    name: str
    description: str


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(the front matter's YAML, the body); (None, text) without a closed front matter."""
    text = text.removeprefix("\ufeff")
    first = _FENCE.match(text)
    if first is None:
        return None, text
    closing = _FENCE.search(text, first.end() + 1)
    if closing is None:
        return None, text
    return text[first.end() + 1 : closing.start()], text[closing.end() + 1 :]


def skill_body(text: str) -> str:
    """The instructions after the front matter, stripped."""
    return split_front_matter(text)[1].strip()


def skill_header(text: str, folder: str) -> SkillHeader:
    """The name (default: the skill's folder) and description. Raises SkillFileError."""
    front, _ = split_front_matter(text)
    if front is None:
        raise SkillFileError("no front matter between leading '---' lines")
    fields = _parse(front)
    return SkillHeader(name=_name(fields.get("name"), folder), description=_description(fields))


def _parse(front: str) -> dict[str, Any]:
    # Imported here, when a file has front matter to read: PyYAML is ~8 ms and a few MiB
    # that a server with no agent or skill files never needs.
    import yaml  # type: ignore[import-untyped]  # no stubs: types-PyYAML is not a dependency

    try:
        fields = yaml.safe_load(front)
    except yaml.YAMLError as error:
        raise SkillFileError(f"front matter is not valid YAML: {_first_line(error)}") from None
    if fields is None:
        return {}
    if not isinstance(fields, dict):
        raise SkillFileError("front matter is not a mapping of fields")
    return fields


def _name(value: object, folder: str) -> str:
    if value is None:
        value = folder
    if not isinstance(value, str):
        raise SkillFileError(f"name must be text, not {type(value).__name__}")
    name = value.strip().lower()
    if not NAME_PATTERN.fullmatch(name):
        raise SkillFileError(
            f"name {value!r} is not 1-64 letters, digits, '-' or '_' starting with a "
            "letter or digit"
        )
    return name


def _description(fields: dict[str, Any]) -> str:
    value = fields.get("description")
    if not isinstance(value, str) or not value.strip():
        raise SkillFileError("description is missing")
    # Listed on one line for the model, whatever the YAML's line breaks.
    description = " ".join(value.split())
    if len(description) > DESCRIPTION_CAP:
        description = description[: DESCRIPTION_CAP - 1] + "…"
    return description


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
