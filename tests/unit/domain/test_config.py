import pytest

from domain.config import (
    MODE_OPTION_ID,
    MODEL_OPTION_ID,
    THOUGHT_OPTION_ID,
    Catalog,
    SessionConfig,
)
from domain.errors import InvalidConfigValue, UnknownConfigOption, UnknownMode
from domain.models import ModelInfo, ThinkingPlan
from domain.modes import ModeId, offered_modes

THINKER = ModelInfo(id="a", name="A", max_output_tokens=64_000)
PLAIN = ModelInfo(id="b", name="B", thinking=False, images=False)
CATALOG = Catalog(modes=offered_modes(allow_bypass=False), models=(THINKER, PLAIN))


def config(model: str = "a", mode: str = "default", level: str = "off") -> SessionConfig:
    return SessionConfig(mode_id=mode, model=model, thought_level=level)


def test_bypass_is_offered_only_when_allowed() -> None:
    assert [m.id for m in offered_modes(allow_bypass=False)] == ["default", "accept_edits", "plan"]
    assert [m.id for m in offered_modes(allow_bypass=True)][-1] == "bypass"
    with pytest.raises(UnknownMode) as error:
        CATALOG.check_mode("bypass")
    assert error.value.details["available"] == ["default", "accept_edits", "plan"]


def test_a_stored_mode_no_longer_offered_opens_as_the_default() -> None:
    assert CATALOG.usable_mode("bypass") == "default"
    assert CATALOG.usable_mode("plan") == "plan"


def test_options_are_mode_model_and_thought_level_for_a_thinking_model() -> None:
    mode, model, thought = CATALOG.options_for(config(mode="plan", level="high"))
    assert (mode.id, mode.category, mode.current_value) == ("mode", "mode", "plan")
    assert [c.value for c in mode.choices] == ["default", "accept_edits", "plan"]
    assert (model.id, model.category, model.current_value) == ("model", "model", "a")
    assert [(c.value, c.name) for c in model.choices] == [("a", "A"), ("b", "B")]
    assert (thought.id, thought.category, thought.current_value) == (
        "thought_level",
        "thought_level",
        "high",
    )
    assert [c.value for c in thought.choices] == ["off", "low", "medium", "high"]


def test_a_model_that_cannot_think_gets_no_thought_option() -> None:
    options = CATALOG.options_for(config(model="b", level="high"))
    assert [o.id for o in options] == ["mode", "model"]
    with pytest.raises(UnknownConfigOption) as error:
        CATALOG.check_option(THOUGHT_OPTION_ID, "low", config(model="b"))
    assert error.value.details["available"] == ["mode", "model"]


def test_a_stored_model_no_longer_offered_stays_selectable() -> None:
    _, model, _ = CATALOG.options_for(config(model="old"))
    assert [c.value for c in model.choices] == ["old", "a", "b"]
    assert CATALOG.check_option(MODEL_OPTION_ID, "old", config(model="old")) == "old"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        (MODE_OPTION_ID, "bypass"),
        (MODE_OPTION_ID, "yolo"),
        (MODEL_OPTION_ID, "c"),
        (MODEL_OPTION_ID, True),
        (THOUGHT_OPTION_ID, "max"),
        (THOUGHT_OPTION_ID, None),
    ],
)
def test_values_outside_the_choices_are_refused_with_the_allowed_ones(
    option: str, value: object
) -> None:
    with pytest.raises(InvalidConfigValue) as error:
        CATALOG.check_option(option, value, config())
    assert error.value.details["configId"] == option
    assert value not in error.value.details["allowed"]


def test_unknown_options_are_refused() -> None:
    with pytest.raises(UnknownConfigOption):
        CATALOG.check_option("temperature", "1", config())


def test_unknown_models_get_the_providers_usual_abilities() -> None:
    assert CATALOG.model("z").thinking and CATALOG.model("z").images
    cautious = Catalog(modes=(), models=(), unknown_thinks=False, unknown_reads_images=False)
    assert not cautious.model("z").thinking and not cautious.model("z").images


@pytest.mark.parametrize(
    ("model", "level", "plan"),
    [
        (THINKER, "off", ThinkingPlan(budget=0, max_tokens=8192)),
        (THINKER, "low", ThinkingPlan(budget=4000, max_tokens=12192)),
        (THINKER, "medium", ThinkingPlan(budget=12000, max_tokens=20192)),
        (THINKER, "high", ThinkingPlan(budget=32000, max_tokens=40192)),
        (PLAIN, "high", ThinkingPlan(budget=0, max_tokens=8192)),
        (THINKER, "bogus", ThinkingPlan(budget=0, max_tokens=8192)),
        # within the model's output limit
        (
            ModelInfo(id="c", name="C", max_output_tokens=32_000),
            "high",
            ThinkingPlan(budget=23808, max_tokens=32000),
        ),
        (
            ModelInfo(id="d", name="D", max_output_tokens=8192),
            "high",
            ThinkingPlan(budget=4096, max_tokens=8192),
        ),
    ],
)
def test_thinking_budgets_raise_max_tokens_within_the_models_limit(
    model: ModelInfo, level: str, plan: ThinkingPlan
) -> None:
    got = model.thinking_plan(level, 8192)
    assert got == plan
    assert got.budget == 0 or 1024 <= got.budget < got.max_tokens


def test_mode_ids_are_exactly_the_issues() -> None:
    assert [m.value for m in ModeId] == ["default", "accept_edits", "plan", "bypass"]
