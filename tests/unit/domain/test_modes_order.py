"""Which of two modes is stricter: a named sub-agent's own mode may only narrow its
parent's."""

import pytest

from domain.modes import ModeId, stricter


@pytest.mark.parametrize(
    ("parent", "agent", "expected"),
    [
        ("accept_edits", "plan", "plan"),
        ("accept_edits", "default", "default"),
        ("default", "bypass", "default"),
        ("plan", "accept_edits", "plan"),
        ("bypass", "accept_edits", "accept_edits"),
        ("default", None, "default"),
        ("default", "no_such_mode", "default"),
    ],
)
def test_the_stricter_mode_wins(parent: str, agent: str | None, expected: str) -> None:
    assert stricter(parent, agent) == expected


def test_every_mode_has_a_place_in_the_order() -> None:
    assert {stricter(m, m) for m in ModeId} == set(ModeId)
