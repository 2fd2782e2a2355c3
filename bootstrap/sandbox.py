"""The sandbox's rules from the settings: what sessions are offered (cheap enough for the
`initialize` path; the confinement itself is bootstrap.confinement)."""

import shutil

from bootstrap.settings import Settings
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxRules


def bwrap_installed() -> bool:
    """Cheap (a PATH lookup): whether sessions are offered confined levels at all. That the
    kernel lets bubblewrap work is found at the first confined command (it fails closed)
    or, for a network-bound server, before it listens (bootstrap.listen)."""
    return shutil.which("bwrap") is not None


def sandbox_rules(settings: Settings, *, available: bool) -> SandboxRules:
    return SandboxRules(
        default=SandboxLevel(settings.sandbox) if available else SandboxLevel.OFF,
        ceiling=SandboxLevel(settings.sandbox_ceiling),
        network=NetworkLevel(settings.sandbox_network),
        allow=settings.sandbox_allow,
        available=available,
    )
