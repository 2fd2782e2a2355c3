import pytest

from domain.errors import InvalidTransition
from domain.ids import ToolCallId
from domain.permission import Decider, PermissionDecision, PermissionOption
from domain.stop_reason import ModelStop, StopReason
from domain.tool_call import ToolCallStatus
from domain.tools import TOOLS, title_for
from domain.turn import Turn
from domain.usage import Usage
from tests.factories import T0, ToolCallFactory


def test_usage_adds_every_field_and_totals() -> None:
    total = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=2) + Usage(
        input_tokens=1, output_tokens=1, cache_write_tokens=3
    )
    assert total == Usage(
        input_tokens=11, output_tokens=6, cache_read_tokens=2, cache_write_tokens=3
    )
    assert total.total_tokens == 22


def test_usage_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="negative"):
        Usage(input_tokens=-1)


def test_turn_counts_requests_up_to_its_limit() -> None:
    turn = Turn(started_at=T0, max_requests=2)
    turn.record_request(Usage(input_tokens=1))
    assert turn.may_request
    turn.record_request(Usage(output_tokens=2))
    assert not turn.may_request
    assert turn.usage == Usage(input_tokens=1, output_tokens=2)
    with pytest.raises(ValueError, match="no model request"):
        turn.record_request(Usage())


def test_turn_keeps_its_first_stop_reason() -> None:
    turn = Turn(started_at=T0, max_requests=1)
    turn.finish(StopReason.END_TURN, at=T0)
    turn.finish(StopReason.CANCELLED, at=T0)
    assert turn.stop_reason is StopReason.END_TURN


def test_model_stops_that_continue_the_turn_have_no_stop_reason() -> None:
    assert ModelStop.TOOL_USE.continues_turn
    with pytest.raises(ValueError, match="does not end"):
        ModelStop.TOOL_USE.as_stop_reason()
    assert ModelStop.REFUSAL.as_stop_reason() is StopReason.REFUSAL
    assert ModelStop.MAX_TOKENS.as_stop_reason() is StopReason.MAX_TOKENS


def test_tool_call_status_only_moves_forward() -> None:
    call = ToolCallFactory().advance(ToolCallStatus.IN_PROGRESS).advance(ToolCallStatus.COMPLETED)
    assert call.status is ToolCallStatus.COMPLETED and call.status.is_final
    with pytest.raises(InvalidTransition):
        call.advance(ToolCallStatus.IN_PROGRESS)


def test_pending_tool_call_can_fail_without_running() -> None:
    assert ToolCallFactory().advance(ToolCallStatus.FAILED).status is ToolCallStatus.FAILED


def test_permission_options() -> None:
    assert PermissionOption.ALLOW_ALWAYS.allows and PermissionOption.ALLOW_ALWAYS.remembered
    assert not PermissionOption.REJECT_ONCE.allows and not PermissionOption.REJECT_ONCE.remembered
    assert {o.value for o in PermissionOption} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
        "allow_once_unsandboxed",
    }
    # Its own id, ACP's kind: a client shows it as the "allow once" it is.
    unsandboxed = PermissionOption.ALLOW_ONCE_UNSANDBOXED
    assert unsandboxed.allows and not unsandboxed.remembered
    assert unsandboxed.kind == "allow_once"
    assert {o.kind for o in PermissionOption} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    }
    decision = PermissionDecision(
        tool_call_id=ToolCallId("t"),
        tool_name="bash",
        arguments={},
        option=None,
        decided_by=Decider.TIMEOUT,
        decided_at=T0,
    )
    assert not decision.allowed


@pytest.mark.parametrize(
    ("tool", "arguments", "title"),
    [
        ("read_file", {"path": "src/app.py"}, "Read src/app.py"),
        ("bash", {"command": "pytest -q"}, "Run `pytest -q`"),
        ("edit_file", {"path": "a.py"}, "Edit a.py"),
        ("grep", {"pattern": "TODO", "path": "src"}, "Search for TODO in src"),
        ("agent", {"prompt": "p", "description": "find callers"}, "Sub-agent: find callers"),
        ("load_skill", {"name": "release"}, "Load skill release"),
        ("other", {}, "Use other"),
    ],
)
def test_titles(tool: str, arguments: dict, title: str) -> None:
    assert title_for(tool, arguments) == title


def test_tool_kinds_follow_the_product_documents() -> None:
    assert {n: s.kind.value for n, s in TOOLS.items()} == {
        "read_file": "read",
        "list_files": "read",
        "glob": "search",
        "grep": "search",
        "web_fetch": "fetch",
        "load_skill": "read",
        "write_file": "edit",
        "edit_file": "edit",
        "bash": "execute",
        "agent": "execute",
        "exit_plan_mode": "switch_mode",
        "todo_write": "think",
        "ask_user": "other",
        "task_output": "read",  # ours (issue 30): a background task's output
        "task_kill": "execute",
    }
