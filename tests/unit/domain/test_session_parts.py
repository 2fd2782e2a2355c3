"""The value objects a session is made of: validated when made, never changed after."""

from dataclasses import FrozenInstanceError
from datetime import datetime, timedelta

import pytest

from domain.choices import Choices
from domain.config import SessionConfig
from domain.errors import InvalidWorkingDirectory
from domain.models import ThoughtLevel
from domain.timestamps import Timestamps
from domain.totals import NOTHING_SPENT, Totals
from domain.usage import Usage
from domain.workspace import Workspace
from tests.factories import T0


def test_a_workspace_lives_in_absolute_directories() -> None:
    with pytest.raises(InvalidWorkingDirectory):
        Workspace(cwd="relative/dir")
    with pytest.raises(InvalidWorkingDirectory) as refused:
        Workspace(cwd="/p", additional_directories=("/x", "y"))
    assert refused.value.details == {"cwd": "y"}
    assert Workspace(cwd="/p", additional_directories=("/x",)).roots == ("/p", "/x")


def test_a_workspace_is_frozen() -> None:
    workspace = Workspace(cwd="/p")
    with pytest.raises(FrozenInstanceError):
        workspace.cwd = "/q"  # type: ignore[misc]


def test_choices_hold_a_read_only_copy_of_their_config() -> None:
    given: dict[str, object] = {"thought_level": "high"}
    choices = Choices(model="m", config=given)
    given["thought_level"] = "low"
    assert choices.config == {"thought_level": "high"}
    with pytest.raises(TypeError):
        choices.config["thought_level"] = "low"  # type: ignore[index]


def test_another_option_is_new_choices() -> None:
    choices = Choices(model="m", mode_id="plan")
    assert choices.thought_level == ThoughtLevel.OFF  # none chosen
    chosen = choices.with_option("thought_level", "high")
    assert (chosen.thought_level, choices.thought_level) == ("high", ThoughtLevel.OFF)
    assert chosen.as_config() == SessionConfig(
        mode_id="plan", model="m", thought_level="high", options={"thought_level": "high"}
    )


def test_choices_name_a_model_and_a_mode() -> None:
    with pytest.raises(ValueError, match="model"):
        Choices(model="")
    with pytest.raises(ValueError, match="mode"):
        Choices(model="m", mode_id="")


def test_totals_count_each_request_and_a_price_once_known() -> None:
    one = Usage(input_tokens=10, output_tokens=2)
    unpriced = NOTHING_SPENT.charged(one, None)
    assert unpriced == Totals(spent=one, cost=None)
    priced = unpriced.charged(one, 0.5).charged(one, None)
    assert priced == Totals(spent=one + one + one, cost=0.5)
    assert Totals() == NOTHING_SPENT  # left as it was: charging makes new totals


def test_a_cost_is_not_negative() -> None:
    with pytest.raises(ValueError, match="negative"):
        Totals(cost=-0.01)


def test_timestamps_carry_a_time_zone() -> None:
    with pytest.raises(ValueError, match="time zone"):
        Timestamps.starting(datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="time zone"):
        Timestamps(created_at=T0, updated_at=datetime(2026, 1, 1))


def test_a_session_is_updated_forward_only() -> None:
    started = Timestamps.starting(T0)
    later = started.touched(T0 + timedelta(hours=1))
    assert (later.created_at, later.updated_at) == (T0, T0 + timedelta(hours=1))
    assert later.touched(T0) is later
    assert started.updated_at == T0
