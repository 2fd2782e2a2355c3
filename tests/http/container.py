"""The Dockerfile and docker-compose.yml, read without Docker (none on our machines) and
without a YAML library: the compose file keeps to the block-style subset parsed here, and
anything beyond it fails loudly."""

import json
import shlex
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def dockerfile() -> dict[str, list[str]]:
    """Instruction -> its arguments, one entry per occurrence (continuations joined)."""
    instructions: dict[str, list[str]] = {}
    logical = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    for line in logical.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, arguments = line.partition(" ")
            instructions.setdefault(name.upper(), []).append(arguments.strip())
    return instructions


def exec_form(arguments: str) -> list[str]:
    value = json.loads(arguments)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), arguments
    return value


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for arguments in dockerfile().get("ENV", []):
        for pair in shlex.split(arguments):
            key, _, value = pair.partition("=")
            env[key] = value
    return env


def compose() -> Any:
    return parse_block_yaml((ROOT / "docker-compose.yml").read_text())


def services_of(profile: str | None) -> dict[str, Any]:
    """The services `docker compose --profile <profile> up` starts beyond the default ones
    (None: the default ones, those without `profiles`)."""
    return {
        name: service
        for name, service in compose()["services"].items()
        if (profile in service.get("profiles", []))
        or (profile is None and "profiles" not in service)
    }


def parse_block_yaml(text: str) -> Any:
    lines = []
    for raw in text.splitlines():
        if "\t" in raw:
            raise ValueError("tabs are not YAML indentation")
        content = raw.strip()
        if content and not content.startswith("#"):
            lines.append((len(raw) - len(raw.lstrip(" ")), content))
    value, end = _block(lines, 0, 0)
    if end != len(lines):
        raise ValueError(f"unexpected indentation at: {lines[end][1]!r}")
    return value


def _block(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[Any, int]:
    if lines[i][1].startswith("- "):
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            items.append(_scalar(lines[i][1][2:]))
            i += 1
        return items, i
    mapping: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent:
        key, colon, rest = lines[i][1].partition(":")
        if not colon or key in mapping:
            raise ValueError(f"not a new mapping key: {lines[i][1]!r}")
        i += 1
        if rest.strip():
            mapping[key] = _scalar(rest.strip())
        elif i < len(lines) and lines[i][0] > indent:
            mapping[key], i = _block(lines, i, lines[i][0])
        else:
            mapping[key] = None
    return mapping, i


def _scalar(text: str) -> Any:
    if text.startswith(("[", '"')):
        return json.loads(text)
    if text.startswith(("{", "'", "&", "*", "!", "|", ">")):
        raise ValueError(f"outside the YAML subset this test reads: {text!r}")
    return text
