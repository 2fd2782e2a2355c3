"""`iac-code config import`: the reference system's `settings.yml` and `.credentials.yml`
(its active provider, models, base URLs and keys) into this project's config.toml.

The reference system's files are not documented; they are read leniently (docs/config-import.md
lists every form understood). What maps is taken, what does not is reported with the reason,
and a key is never printed."""

import os
import sys
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml  # type: ignore[import-untyped]  # no stubs: types-PyYAML is not a dependency

from bootstrap.config_translation import translate
from bootstrap.toml_writer import dumps

SETTINGS_NAMES = ("settings.yml", "settings.yaml")
CREDENTIALS_NAMES = (".credentials.yml", ".credentials.yaml")
MASK = "********"


class ConfigImportError(Exception):
    """Input that cannot be read: the message names the file (and the line)."""


def read_yaml(path: Path) -> dict[str, Any]:
    """One of the reference files as a mapping; an empty file is an empty mapping. Errors
    name the file and the line but never quote it: the line may hold a key."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigImportError(f"{path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigImportError(f"{path}: not UTF-8 text") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise ConfigImportError(f"{path}: invalid YAML at {where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigImportError(f"{path}: invalid YAML ({type(exc).__name__})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigImportError(f"{path}: expected a mapping of settings, found a YAML value")
    return {str(k): v for k, v in data.items()}


def merge(existing: Mapping[str, Any], imported: Mapping[str, Any]) -> dict[str, Any]:
    """Imported values over the existing ones, table by table; everything else kept."""
    merged = dict(existing)
    for key, value in imported.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def masked(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: masked(v) if isinstance(v, Mapping) else (MASK if k == "api_key" else v)
        for k, v in config.items()
    }


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`, readable by its owner only from the first byte on."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _find(source: Path, names: tuple[str, ...]) -> Path | None:
    return next((source / n for n in names if (source / n).is_file()), None)


def _existing(target: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigImportError(
            f"{target}: cannot merge into it ({exc}); fix or move it, then import again"
        ) from None


def import_config(
    source: Path, config_dir: Path, *, dry_run: bool, force: bool, out: TextIO
) -> int:
    """The command: 0 when written (or shown), 1 when refused or nothing was found to take;
    ConfigImportError for unreadable input (the caller exits 2)."""
    if not source.is_dir():
        raise ConfigImportError(f"{source}: no such directory")
    settings_file = _find(source, SETTINGS_NAMES)
    credentials_file = _find(source, CREDENTIALS_NAMES)
    if settings_file is None and credentials_file is None:
        raise ConfigImportError(f"{source}: neither settings.yml nor .credentials.yml in it")
    settings = read_yaml(settings_file) if settings_file else {}
    credentials = read_yaml(credentials_file) if credentials_file else {}
    imported = translate(settings, credentials)
    read = ", ".join(str(f) for f in (settings_file, credentials_file) if f)
    out.write(f"read {read}\n")
    out.writelines(f"  took {line}\n" for line in imported.took)
    out.writelines(f"  skipped {line}\n" for line in imported.skipped)
    if not imported.config:
        out.write("nothing to import: config.toml left as it was\n")
        return 1
    target = config_dir / "config.toml"
    exists = target.exists()
    if exists and not force and not dry_run:
        sys.stderr.write(
            f"iac-code: {target} exists: nothing written. --force merges the imported values "
            "into it (its other settings kept); --dry-run shows them first\n"
        )
        return 1
    config = merge(_existing(target), imported.config) if exists and force else imported.config
    if dry_run:
        note = " (merged into the existing file)" if exists and force else ""
        out.write(f"would write {target}{note}, keys masked:\n\n{dumps(masked(config))}")
        if exists and not force:
            out.write(f"\n{target} exists: a real run needs --force (which merges)\n")
        return 0
    write_private(target, dumps(config))
    out.write(f"wrote {target} (readable by you only)\n")
    return 0


def config_dir_of(environ: Mapping[str, str]) -> Path:
    """Where config.toml lives: as bootstrap.settings finds it."""
    return Path(environ.get("IAC_CODE_CONFIG_DIR") or "~/.iac-code").expanduser()


def main(source: Path, environ: Mapping[str, str], *, dry_run: bool, force: bool) -> int:
    try:
        return import_config(
            source.expanduser(),
            config_dir_of(environ),
            dry_run=dry_run,
            force=force,
            out=sys.stdout,
        )
    except ConfigImportError as exc:
        sys.stderr.write(f"iac-code: {exc}\n")
        return 2
