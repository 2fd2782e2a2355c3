"""The installed package's version, as `importlib.metadata.version("iac-code")` gives it.

Read from the `iac_code-*.dist-info/METADATA` that installers put on `sys.path`, searched
the way importlib.metadata searches, because importing importlib.metadata (email, zipfile,
csv, tempfile, ...) costs ~10 ms of every start before `initialize` can be answered.
Whatever that plain search cannot tell apart as importlib.metadata would (an archive on
the path, an egg, two candidates in one directory, another metadata finder) is left to
importlib.metadata itself."""

import os
import re
import sys
from collections.abc import Iterable
from importlib.machinery import PathFinder

_NAME = "iac_code"  # the distribution's name normalized as importlib.metadata does
_UNKNOWN = "0.0.0+unknown"


class Unsure(Exception):
    """The plain search cannot tell what importlib.metadata would find."""


def package_version() -> str:
    try:
        if any(_lists_distributions(finder) for finder in sys.meta_path):
            raise Unsure("another finder lists distributions")
        return installed_version(sys.path)
    except Unsure:
        return _standard_version()


def _lists_distributions(finder: object) -> bool:
    return finder is not PathFinder and hasattr(finder, "find_distributions")


def installed_version(path: Iterable[str]) -> str:
    """The `Version` of the first `iac_code` metadata directory in `path`'s directories,
    searched in order; `Unsure` where importlib.metadata might find another answer."""
    for entry in path:
        directory = entry or "."
        if os.path.isfile(directory) or directory.lower().endswith(".egg"):
            raise Unsure(f"{directory}: importlib.metadata looks inside it")
        try:
            names = os.listdir(directory)
        except OSError:
            continue  # missing or unreadable: importlib.metadata finds nothing there either
        found = [name for name in names if _is_ours(name)]
        if len(found) > 1:
            raise Unsure(f"{directory}: {', '.join(found)}")  # it takes the first listed
        if found:
            if not found[0].lower().endswith(".dist-info"):
                raise Unsure(f"{found[0]}: an egg's metadata")
            return _metadata_version(os.path.join(directory, found[0], "METADATA"))
    raise Unsure("not installed where the plain search looks")


def _is_ours(name: str) -> bool:
    """A metadata directory of our distribution, by importlib.metadata's test (whose
    normalizing changes only case and separators: the name starts with "iac")."""
    folded = name.lower()
    if not folded.startswith("iac") or not folded.endswith((".dist-info", ".egg-info")):
        return False
    base = folded.rpartition(".")[0].partition("-")[0]
    return re.sub(r"[-_.]+", "-", base).replace("-", "_") == _NAME


def _metadata_version(metadata: str) -> str:
    """The `Version` header of a METADATA file (RFC 822 headers: up to the first blank
    line)."""
    try:
        with open(metadata, encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                if key.strip().lower() == "version":
                    return value.strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise Unsure(str(exc)) from None
    raise Unsure(f"{metadata}: no Version header")


def _standard_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("iac-code")
    except PackageNotFoundError:
        return _UNKNOWN
