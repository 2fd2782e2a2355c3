"""What a session's commands may touch: the sandbox level, the network, and the server's rules
for both (a default for new sessions, a ceiling no session may pass)."""

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from domain.modes import ModeId

SANDBOX_OPTION_ID = "sandbox"
NETWORK_OPTION_ID = "network"


class SandboxLevel(StrEnum):
    """From the tightest to the loosest (the order ceilings compare by)."""

    READ_ONLY = "read-only"  # the command reads the system and the workspace, writes nothing
    WORKSPACE_WRITE = "workspace-write"  # ... and writes the session's directories
    OFF = "off"  # no sandbox: the command runs with the server's rights


class NetworkLevel(StrEnum):
    NONE = "none"  # an empty network namespace
    ALLOWLIST = "allowlist"  # only the hosts the server lists, through its proxy
    FULL = "full"  # the server's network


_LEVELS = tuple(SandboxLevel)

LEVEL_DESCRIPTIONS = {
    SandboxLevel.READ_ONLY: "Commands read the project and the system; they write nothing.",
    SandboxLevel.WORKSPACE_WRITE: "Commands write only the session's directories.",
    SandboxLevel.OFF: "Commands run with all of the server's rights.",
}
NETWORK_DESCRIPTIONS = {
    NetworkLevel.NONE: "Commands reach no network at all.",
    NetworkLevel.ALLOWLIST: "Commands reach only the hosts the server allows.",
    NetworkLevel.FULL: "Commands reach every network the server can.",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxPolicy:
    """How one command runs. `allow` holds the `host[:port]` entries an allowlist lets
    through (empty for the other network levels)."""

    level: SandboxLevel
    network: NetworkLevel
    allow: tuple[str, ...] = ()

    @property
    def confined(self) -> bool:
        return self.level is not SandboxLevel.OFF

    @property
    def writes_workspace(self) -> bool:
        return self.level is not SandboxLevel.READ_ONLY


UNCONFINED = SandboxPolicy(level=SandboxLevel.OFF, network=NetworkLevel.FULL)


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxRules:
    """The server's terms: what a new session gets, the most any session may choose, and
    whether this machine can confine a command at all (`available`). Where it cannot, the
    only level offered is `off`, and saying so is the server's business (a notice)."""

    default: SandboxLevel = SandboxLevel.WORKSPACE_WRITE
    ceiling: SandboxLevel = SandboxLevel.OFF
    network: NetworkLevel = NetworkLevel.NONE
    allow: tuple[str, ...] = ()
    available: bool = True
    engine: str | None = None  # what confines the commands, as the server names it

    def __post_init__(self) -> None:
        if _LEVELS.index(self.default) > _LEVELS.index(self.ceiling):
            raise ValueError(f"the default sandbox {self.default} is above the ceiling")

    def levels(self) -> tuple[SandboxLevel, ...]:
        if not self.available:
            return (SandboxLevel.OFF,)
        return _LEVELS[: _LEVELS.index(self.ceiling) + 1]

    def networks(self) -> tuple[NetworkLevel, ...]:
        """`allowlist` where the operator listed hosts for it; `full` only where the
        ceiling allows no sandbox at all, or the operator made it the default: a server
        that keeps every command confined keeps its network too."""
        offered = [NetworkLevel.NONE]
        if self.allow:
            offered.append(NetworkLevel.ALLOWLIST)
        if self.ceiling is SandboxLevel.OFF or self.network is NetworkLevel.FULL:
            offered.append(NetworkLevel.FULL)
        return tuple(offered)

    def level_of(self, config: Mapping[str, object]) -> SandboxLevel:
        """A session's chosen level, held to what is offered now (a stored choice above a
        ceiling the operator lowered since opens at the ceiling)."""
        offered = self.levels()
        chosen = config.get(SANDBOX_OPTION_ID, self.default)
        if chosen in offered:
            return SandboxLevel(str(chosen))
        return self.default if self.default in offered else offered[-1]

    def network_of(self, config: Mapping[str, object]) -> NetworkLevel:
        offered = self.networks()
        chosen = config.get(NETWORK_OPTION_ID, self.network)
        if chosen in offered:
            return NetworkLevel(str(chosen))
        return self.network if self.network in offered else NetworkLevel.NONE

    def policy(self, config: Mapping[str, object], mode_id: str) -> SandboxPolicy:
        """What a session's next command runs under; plan mode reads only."""
        level = self.level_of(config)
        if mode_id == ModeId.PLAN and SandboxLevel.READ_ONLY in self.levels():
            level = SandboxLevel.READ_ONLY
        network = self.network_of(config)
        if level is SandboxLevel.OFF:
            return UNCONFINED
        allow = self.allow if network is NetworkLevel.ALLOWLIST else ()
        return SandboxPolicy(level=level, network=network, allow=allow)
