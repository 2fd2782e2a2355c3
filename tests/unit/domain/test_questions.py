"""ask_user's question read from the model's input, the form it becomes (checked against
the newest ACP schema file's ElicitationSchema) and the answer as the model reads it."""

import pytest

from domain.questions import (
    ElicitationAction,
    FieldType,
    FormField,
    InvalidQuestion,
    Question,
    read_question,
)
from tests.support.schema_file import problems_with

ACCEPT, DECLINE, CANCEL = ElicitationAction


@pytest.mark.parametrize(
    "arguments",
    [
        {"question": "What name?"},
        {"question": "Which?", "choices": ["a", "b"]},
        {"question": "Which ones?", "choices": ["a", "b"], "multiple": True},
        {"question": "Settings?", "fields": [{"name": "n", "type": "number"}]},
        {
            "question": "Which, and why?",
            "choices": ["a"],
            "fields": [{"name": "why", "label": "Why", "required": False}],
        },
    ],
)
def test_every_form_is_an_elicitation_schema(arguments: dict[str, object]) -> None:
    form = read_question(arguments).form()
    assert problems_with("ElicitationSchema", form) == []
    required, properties = form["required"], form["properties"]
    assert isinstance(required, list) and isinstance(properties, dict)
    assert set(required) <= set(properties)


def test_a_free_text_question_asks_for_one_answer() -> None:
    assert read_question({"question": " What name? "}) == Question(text="What name?")
    assert Question(text="What name?").form() == {
        "type": "object",
        "properties": {"answer": {"type": "string", "title": "Answer"}},
        "required": ["answer"],
    }


def test_several_choices_are_a_multi_select() -> None:
    question = read_question({"question": "Which?", "choices": ["a", "b"], "multiple": True})
    assert question.form()["properties"] == {
        "answer": {
            "type": "array",
            "title": "Answers",
            "items": {"type": "string", "enum": ["a", "b"]},
            "minItems": 1,
        }
    }
    assert question.answered(ACCEPT, {"answer": ["a", "b"]}) == "The user answered: a, b"


def test_fields_keep_their_labels_types_and_whether_required() -> None:
    question = read_question(
        {"question": "Q", "fields": [{"name": "port", "type": "integer", "required": False}]}
    )
    assert question.fields == (
        FormField(name="port", label="port", type=FieldType.INTEGER, required=False),
    )
    assert question.form()["required"] == []


def test_the_three_actions_read_differently() -> None:
    question = Question(text="Which?", choices=("a",))
    assert question.answered(ACCEPT, {"answer": "a"}) == "The user answered: a"
    assert question.answered(DECLINE, {}) == "The user declined to answer."
    assert question.answered(CANCEL, {}) == "The user cancelled the question."
    assert question.answered(ACCEPT, {}) == "The user accepted without giving an answer."


def test_values_not_asked_for_are_not_passed_on() -> None:
    question = Question(text="Q", fields=(FormField(name="n", label="N"),))
    assert question.answered(ACCEPT, {"n": "1", "sneaky": "x"}) == "The user answered:\n- n: 1"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "question must be a non-empty string"),
        ({"question": "Q", "choices": "a"}, "choices must be a list of strings"),
        ({"question": "Q", "choices": ["a", ""]}, "every choice must be a non-empty string"),
        ({"question": "Q", "choices": [str(i) for i in range(21)]}, "at most 20 choices"),
        ({"question": "Q", "multiple": "yes"}, "multiple must be true or false"),
        ({"question": "Q", "fields": [1]}, "fields[0] must be an object"),
        ({"question": "Q", "fields": [{"name": "a b"}]}, "fields[0].name must be a word"),
        ({"question": "Q", "fields": [{"name": "a"}, {"name": "a"}]}, "names must differ"),
        (
            {"question": "Q", "choices": ["x"], "fields": [{"name": "answer"}]},
            "may not be named 'answer' beside choices",
        ),
        ({"question": "Q", "fields": [{"name": "a", "required": 1}]}, "required must be"),
    ],
)
def test_bad_input_names_the_problem(arguments: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidQuestion) as caught:
        read_question(arguments)
    assert problem in str(caught.value)
