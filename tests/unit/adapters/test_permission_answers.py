import pytest

from adapters.protocol.permissions import read_outcome
from domain.permission import PermissionOption as O

OFFERED = tuple(O)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"outcome": {"outcome": "selected", "optionId": "allow_once"}}, O.ALLOW_ONCE),
        ({"outcome": {"outcome": "selected", "optionId": "reject_always"}}, O.REJECT_ALWAYS),
        ({"outcome": {"outcome": "cancelled"}}, None),
        ({"outcome": "allowed", "option_id": "allow_always"}, O.ALLOW_ALWAYS),
        ({"outcome": "allowed"}, O.ALLOW_ONCE),
        ({"outcome": "denied"}, O.REJECT_ONCE),
        ({"outcome": "denied", "option_id": "reject_always"}, O.REJECT_ALWAYS),
        ({"outcome": "denied", "option_id": "allow_always"}, O.REJECT_ONCE),
        ({"outcome": "denied", "option_id": "bogus"}, O.REJECT_ONCE),
        ({"outcome": "cancelled"}, None),
        # anything not offered is a rejection
        ({"outcome": {"outcome": "selected", "optionId": "yolo"}}, O.REJECT_ONCE),
        ({"outcome": {"outcome": "selected"}}, O.REJECT_ONCE),
        ({}, O.REJECT_ONCE),
        (None, O.REJECT_ONCE),
        ("allowed", O.REJECT_ONCE),
    ],
)
def test_official_and_shorthand_answers(answer: object, expected: O | None) -> None:
    assert read_outcome(answer, OFFERED) is expected


def test_an_option_not_offered_this_time_is_a_rejection() -> None:
    answer = {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
    assert read_outcome(answer, (O.ALLOW_ONCE, O.REJECT_ONCE)) is O.REJECT_ONCE
