"""The package's version, in one place: pyproject.toml takes it from here
([tool.setuptools.dynamic]), so the installed metadata and the server always agree, and the
start path reads a constant instead of importing importlib.metadata (email, zipfile, csv,
tempfile: ~10 ms of every start before `initialize` can be answered)."""

VERSION = "0.1.0"


def package_version() -> str:
    return VERSION
