"""A question the model puts to the user (the `ask_user` tool), the form it becomes, and
how the user's answer reads to the model.

The model asks one question: free text, a pick from choices (one, or several), or a short
form of named fields. The form is a flat JSON Schema object of primitive properties, the
shape ACP's elicitation (and MCP's) accepts; the answer is the user's action and, when they
accepted, the values they gave by property name.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from domain.errors import DomainError

ASK_USER = "ask_user"
ANSWER = "answer"  # the one property of a free-text or choice question
MAX_CHOICES = 20
MAX_FIELDS = 8
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class ElicitationAction(StrEnum):
    """What the user did with a question: answered it, said no, or dismissed it."""

    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


class FieldType(StrEnum):
    TEXT = "text"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"


_SCHEMA_TYPE = {
    FieldType.TEXT: "string",
    FieldType.NUMBER: "number",
    FieldType.INTEGER: "integer",
    FieldType.BOOLEAN: "boolean",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class FormField:
    name: str
    label: str
    type: FieldType = FieldType.TEXT
    required: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    text: str
    choices: tuple[str, ...] = ()
    multiple: bool = False  # several choices may be picked
    fields: tuple[FormField, ...] = ()

    def form(self) -> dict[str, object]:
        """The form the user fills in: `answer` (free text or the choices) unless the
        question is a form of its own fields alone."""
        properties: dict[str, object] = {}
        required: list[str] = []
        if self.choices or not self.fields:
            properties[ANSWER] = self._answer_property()
            required.append(ANSWER)
        for item in self.fields:
            properties[item.name] = {"type": _SCHEMA_TYPE[item.type], "title": item.label}
            if item.required:
                required.append(item.name)
        return {"type": "object", "properties": properties, "required": required}

    def _answer_property(self) -> dict[str, object]:
        if not self.choices:
            return {"type": "string", "title": "Answer"}
        if self.multiple:
            return {
                "type": "array",
                "title": "Answers",
                "items": {"type": "string", "enum": list(self.choices)},
                "minItems": 1,
            }
        options = [{"const": choice, "title": choice} for choice in self.choices]
        return {"type": "string", "title": "Answer", "oneOf": options}

    def answered(self, action: ElicitationAction, content: Mapping[str, object]) -> str:
        """What the model is told of the user's answer."""
        if action is ElicitationAction.DECLINE:
            return "The user declined to answer."
        if action is ElicitationAction.CANCEL:
            return "The user cancelled the question."
        asked = [ANSWER, *(f.name for f in self.fields)]
        given = {name: content[name] for name in asked if name in content}
        if not given:
            return "The user accepted without giving an answer."
        if list(given) == [ANSWER]:
            return f"The user answered: {_shown(given[ANSWER])}"
        lines = "\n".join(f"- {name}: {_shown(value)}" for name, value in given.items())
        return f"The user answered:\n{lines}"


def _shown(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return json.dumps(value)


class InvalidQuestion(DomainError):
    default_message = "Invalid question."


def read_question(arguments: Mapping[str, object]) -> Question:
    """The ask_user input, checked. Raises InvalidQuestion naming every problem."""
    problems: list[str] = []
    text = arguments.get("question")
    if not isinstance(text, str) or not text.strip():
        problems.append("question must be a non-empty string")
    choices = _choices(arguments.get("choices"), problems)
    multiple = arguments.get("multiple", False)
    if not isinstance(multiple, bool):
        problems.append("multiple must be true or false")
    fields = _fields(arguments.get("fields"), bool(choices), problems)
    if problems:
        raise InvalidQuestion("; ".join(problems) + ".")
    assert isinstance(text, str)
    assert isinstance(multiple, bool)
    return Question(text=text.strip(), choices=choices, multiple=multiple, fields=fields)


def _choices(value: object, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        problems.append("choices must be a list of strings")
        return ()
    choices = tuple(c.strip() for c in value if isinstance(c, str) and c.strip())
    if len(choices) != len(value):
        problems.append("every choice must be a non-empty string")
    if len(set(choices)) != len(choices):
        problems.append("choices must differ from each other")
    if len(choices) > MAX_CHOICES:
        problems.append(f"at most {MAX_CHOICES} choices")
    return choices


def _fields(value: object, has_choices: bool, problems: list[str]) -> tuple[FormField, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        problems.append("fields must be a list of objects {name, label?, type?, required?}")
        return ()
    if len(value) > MAX_FIELDS:
        problems.append(f"at most {MAX_FIELDS} fields")
    fields = [f for i, item in enumerate(value) if (f := _field(item, i, problems)) is not None]
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        problems.append("field names must differ from each other")
    if has_choices and ANSWER in names:
        problems.append(f"a field may not be named {ANSWER!r} beside choices (the choice is)")
    return tuple(fields)


def _field(item: object, index: int, problems: list[str]) -> FormField | None:
    where = f"fields[{index}]"
    if not isinstance(item, Mapping):
        problems.append(f"{where} must be an object {{name, label?, type?, required?}}")
        return None
    name, label = item.get("name"), item.get("label")
    kind, required = item.get("type", FieldType.TEXT.value), item.get("required", True)
    count = len(problems)
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(f"{where}.name must be a word of letters, digits and _ (not {name!r:.40})")
    if label is not None and not isinstance(label, str):
        problems.append(f"{where}.label must be a string")
    if kind not in [t.value for t in FieldType]:
        allowed = ", ".join(t.value for t in FieldType)
        problems.append(f"{where}.type must be one of {allowed} (not {kind!r:.40})")
    if not isinstance(required, bool):
        problems.append(f"{where}.required must be true or false")
    if len(problems) > count:
        return None
    assert isinstance(name, str)
    assert isinstance(kind, str)
    assert isinstance(required, bool)
    return FormField(
        name=name,
        label=label.strip() if isinstance(label, str) and label.strip() else name,
        type=FieldType(kind),
        required=required,
    )
