"""The session modes: how much the agent may do without asking."""

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True, slots=True, kw_only=True)
class Mode:
    id: str
    name: str
    description: str | None = None


class ModeId(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    PLAN = "plan"
    BYPASS = "bypass"


MODES: dict[ModeId, Mode] = {
    ModeId.DEFAULT: Mode(
        id=ModeId.DEFAULT,
        name="Default",
        description="Reads and searches in the project run at once; anything else asks first.",
    ),
    ModeId.ACCEPT_EDITS: Mode(
        id=ModeId.ACCEPT_EDITS,
        name="Accept edits",
        description="Also edits files in the project without asking; commands still ask.",
    ),
    ModeId.PLAN: Mode(
        id=ModeId.PLAN,
        name="Plan",
        description="Reads and plans only: no file is changed and no command runs.",
    ),
    ModeId.BYPASS: Mode(
        id=ModeId.BYPASS,
        name="Don't ask",
        description="Everything inside the project runs without asking.",
    ),
}
DEFAULT_MODE = MODES[ModeId.DEFAULT]


def offered_modes(*, allow_bypass: bool) -> tuple[Mode, ...]:
    """The modes a server offers: "don't ask" only when its operator allowed it."""
    return tuple(m for mode_id, m in MODES.items() if allow_bypass or mode_id is not ModeId.BYPASS)


# From the mode that lets the fewest calls run without asking to the one that lets the most.
_STRICTNESS = (ModeId.PLAN, ModeId.DEFAULT, ModeId.ACCEPT_EDITS, ModeId.BYPASS)


def stricter(mode: str, other: str | None) -> str:
    """The stricter of two mode ids (an unknown or absent `other` changes nothing): a named
    sub-agent's own mode may narrow what its parent's mode allows, never widen it."""
    if other not in _STRICTNESS or mode not in _STRICTNESS:
        return mode
    return min(mode, other, key=lambda m: _STRICTNESS.index(ModeId(m)))
