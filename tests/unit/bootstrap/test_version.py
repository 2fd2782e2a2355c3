"""The version read from the metadata directory is importlib.metadata's, or importlib.metadata
is asked."""

import importlib.metadata
import zipfile
from pathlib import Path

import pytest

from bootstrap.version import Unsure, installed_version, package_version


def _dist_info(directory: Path, name: str, version: str | None) -> None:
    info = directory / name
    info.mkdir(parents=True)
    headers = ["Metadata-Version: 2.4", "Name: iac-code"]
    headers += [] if version is None else [f"Version: {version}"]
    body = "\n".join([*headers, "", "Version: not a header (the description)"])
    (info / "METADATA").write_text(body + "\n", encoding="utf-8")


def test_the_running_installation_gives_importlib_metadata_s_version() -> None:
    assert package_version() == importlib.metadata.version("iac-code")


def test_the_first_directory_holding_the_metadata_wins(tmp_path: Path) -> None:
    _dist_info(tmp_path / "b", "iac_code-2.0.0.dist-info", "2.0.0")
    _dist_info(tmp_path / "c", "iac_code-3.0.0.dist-info", "3.0.0")
    path = [str(tmp_path / "missing"), str(tmp_path / "b"), str(tmp_path / "c")]
    assert installed_version(path) == "2.0.0"
    found = importlib.metadata.Distribution.discover(name="iac-code", path=path)
    assert [d.version for d in found][:1] == ["2.0.0"]  # importlib.metadata agrees


def test_names_are_normalized_as_importlib_metadata_does(tmp_path: Path) -> None:
    _dist_info(tmp_path, "IAC.Code-1.2.3.dist-info", "1.2.3")
    assert installed_version([str(tmp_path)]) == "1.2.3"
    _dist_info(tmp_path / "other", "iac_codex-9.dist-info", "9")
    with pytest.raises(Unsure):
        installed_version([str(tmp_path / "other")])


@pytest.mark.parametrize(
    "layout",
    ["egg-info", "two versions", "no version header", "archive", "nothing"],
)
def test_what_the_plain_search_cannot_tell_is_left_to_importlib_metadata(
    tmp_path: Path, layout: str
) -> None:
    entry = tmp_path / "site"
    entry.mkdir()
    if layout == "egg-info":
        (entry / "iac_code.egg-info").mkdir()
    elif layout == "two versions":
        _dist_info(entry, "iac_code-1.0.dist-info", "1.0")
        _dist_info(entry, "iac_code-2.0.dist-info", "2.0")
    elif layout == "no version header":
        _dist_info(entry, "iac_code-1.0.dist-info", None)
    elif layout == "archive":
        entry = tmp_path / "packages.zip"
        with zipfile.ZipFile(entry, "w") as archive:
            archive.writestr("iac_code-4.0.dist-info/METADATA", "Version: 4.0\n")
    with pytest.raises(Unsure):
        installed_version([str(entry)])
