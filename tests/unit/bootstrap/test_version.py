"""The version the server tells is the installed distribution's (pyproject.toml reads it
from bootstrap/version.py)."""

import importlib.metadata

from bootstrap.version import package_version


def test_the_version_is_the_installed_distributions() -> None:
    assert package_version() == importlib.metadata.version("iac-code")
