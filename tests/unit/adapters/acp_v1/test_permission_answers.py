import pytest

from adapters.acp_v1.permissions import read_outcome
from application.ports.permissions import PermissionRequest
from application.tools.plan_exit import LEAVE_PLAN_IDS, LEAVE_PLAN_OPTIONS
from domain.ids import ToolCallId
from domain.permission import PermissionOption as O
from domain.tool_call import ToolKind


def offering(*options: O, ids: dict[O, str] | None = None) -> PermissionRequest:
    return PermissionRequest(
        tool_call_id=ToolCallId("t1"),
        tool_name="bash",
        title="Run `ls`",
        kind=ToolKind.EXECUTE,
        arguments={"command": "ls"},
        locations=(),
        preview=(),
        options=options,
        ids=ids or {},
    )


OFFERED = offering(*O)


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
    assert read_outcome(answer, offering(O.ALLOW_ONCE, O.REJECT_ONCE)) is O.REJECT_ONCE


@pytest.mark.parametrize(
    ("option_id", "expected"),
    [("accept_edits", O.ALLOW_ALWAYS), ("default", O.ALLOW_ONCE), ("plan", O.REJECT_ONCE)],
)
def test_options_with_their_own_ids_are_read_back_as_their_kinds(
    option_id: str, expected: O
) -> None:
    request = offering(*LEAVE_PLAN_OPTIONS, ids=LEAVE_PLAN_IDS)
    answer = {"outcome": {"outcome": "selected", "optionId": option_id}}
    assert read_outcome(answer, request) is expected
    # The kind's own id is not what was offered: a rejection.
    kind_id = {"outcome": {"outcome": "selected", "optionId": expected.value}}
    assert read_outcome(kind_id, request) is O.REJECT_ONCE
