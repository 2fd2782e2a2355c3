"""Every provider of the assembled container resolves: a use case given a collaborator it
no longer takes, or missing one it now requires, fails here at once rather than in the
first end-to-end test whose request happens to build it."""

from pathlib import Path

import pytest
from dependency_injector import providers

from bootstrap.container import migrated_container, release
from bootstrap.settings import load_settings

pytestmark = pytest.mark.integration

ROLES = (
    "core",
    "storage",
    "gateways",
    "clients",
    "sessions",
    "turn",
    "commands",
    "prompting",
    "acp",
)


async def test_every_provider_of_every_role_resolves(tmp_path: Path) -> None:
    environ = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_PROVIDER": "demo"}
    container = migrated_container(load_settings(environ), "0")
    failed: list[str] = []
    try:
        for role in ROLES:
            for name, provider in getattr(container, role)().providers.items():
                if isinstance(provider, providers.DependenciesContainer | providers.Dependency):
                    continue  # the roles before it, checked as themselves
                try:
                    provider()
                except Exception as exc:  # each failure is named, not only the first
                    failed.append(f"{role}.{name}: {type(exc).__name__}: {exc}")
    finally:
        await release(container)
    assert failed == []
