"""The sandbox's rules from the settings: what sessions are offered (cheap enough for the
`initialize` path; the confinement itself is bootstrap.confinement)."""

import shutil

from bootstrap.settings import Settings
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxRules


def likely_engine(settings: Settings) -> str | None:
    """Cheap (a PATH lookup, at most one system call): what will confine the commands, so
    that sessions are offered confined levels at all. Whether the kernel lets it work is
    found at the first confined command (which fails closed, or falls back to Landlock) or,
    for a network-bound server, before it listens (bootstrap.http)."""
    if settings.sandbox_engine != "landlock" and shutil.which("bwrap") is not None:
        return "bubblewrap"
    if settings.sandbox_engine != "bubblewrap":
        from adapters.workspace import landlock

        if landlock.abi() >= landlock.MIN_ABI:
            return "landlock"
    return None


def sandbox_rules(settings: Settings, *, engine: str | None) -> SandboxRules:
    return SandboxRules(
        default=SandboxLevel(settings.sandbox) if engine else SandboxLevel.OFF,
        ceiling=SandboxLevel(settings.sandbox_ceiling),
        network=NetworkLevel(settings.sandbox_network),
        # Only bubblewrap can give a command no route but the proxy's: elsewhere there is
        # nothing an allowlist could be offered for.
        allow=settings.sandbox_allow if engine == "bubblewrap" else (),
        available=engine is not None,
        engine=engine,
    )
