import pytest

from domain.config import DEFAULT_MODE, MODEL_OPTION_ID, Catalog, Choice
from domain.errors import InvalidConfigValue, InvalidTransition, UnknownConfigOption, UnknownMode
from domain.permission import PermissionDecision, PermissionOption
from domain.stop_reason import ModelStop, StopReason
from domain.tool_call import ToolCallStatus
from domain.turn import Turn
from domain.usage import Usage
from tests.factories import T0, ToolCallFactory

CATALOG = Catalog(
    modes=(DEFAULT_MODE,), models=(Choice(value="a", name="A"), Choice(value="b", name="B"))
)


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
    decision = PermissionDecision(
        tool_call_id="t",
        tool_name="bash",
        option=None,  # type: ignore[arg-type]
        decided_by="timeout",
        decided_at=T0,
    )
    assert not decision.allowed


def test_catalog_checks_modes_and_model_choices() -> None:
    CATALOG.check_mode("default")
    with pytest.raises(UnknownMode):
        CATALOG.check_mode("yolo")
    assert CATALOG.check_option(MODEL_OPTION_ID, "b") == "b"
    with pytest.raises(InvalidConfigValue):
        CATALOG.check_option(MODEL_OPTION_ID, "c")
    with pytest.raises(InvalidConfigValue):
        CATALOG.check_option(MODEL_OPTION_ID, True)
    with pytest.raises(UnknownConfigOption):
        CATALOG.check_option("temperature", "1")


def test_options_keep_a_stored_model_that_is_no_longer_offered() -> None:
    (option,) = CATALOG.options_for("old-model")
    assert option.current_value == "old-model"
    assert [c.value for c in option.choices] == ["old-model", "a", "b"]
    assert option.category == "model"
