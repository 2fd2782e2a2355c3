"""A permission request as the replicas pass it to each other: the typed question comes
back whole (what "always allow" would remember stays with the holder), through JSON as
the database stores it; what cannot be read is not shown, an unreadable answer rejects."""

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.cluster.question_codec import (
    KIND,
    decoded_answer,
    decoded_question,
    encoded_answer,
    encoded_question,
)
from application.ports.permissions import PermissionRequest
from application.ports.questions import PermissionAnswer, PermissionQuestion
from domain.ids import ToolCallId
from domain.permission import PermissionOption
from domain.project_rules import CommandPattern, ProjectRule
from domain.tool_call import DiffOutput, TerminalOutput, TextOutput, ToolKind

AT = datetime(2026, 12, 7, 5, 0, tzinfo=UTC)
RULE = ProjectRule(
    cwd="/work",
    tool_name="bash",
    command=CommandPattern(words=("git", "status"), exact=False),
    created_at=AT,
    session_id="s0",
    id=7,
)
REQUEST = PermissionRequest(
    tool_call_id=ToolCallId("call-1"),
    tool_name="bash",
    title="Run git push",
    kind=ToolKind.EXECUTE,
    arguments={"command": "git push", "timeout": 30, "env": {"A": "1"}},
    locations=("/work/a.py",),
    preview=(
        TextOutput(text="about to push"),
        DiffOutput(path="/work/a.py", old_text=None, new_text="x = 1\n"),
        TerminalOutput(terminal_id="t-1", text="$ git push"),
    ),
    options=(PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE),
    remembered=(RULE, replace(RULE, command=None, tool_name="read_file", id=None)),
    names={PermissionOption.ALLOW_ONCE: "Leave plan mode"},
    ids={PermissionOption.ALLOW_ONCE: "exit_plan"},
    child_session_id="child-1",
    agent="reviewer",
)
QUESTION = PermissionQuestion("s1", REQUEST)


def through_the_database(value: dict[str, Any]) -> Any:
    return json.loads(json.dumps(value))


def test_a_question_comes_back_whole() -> None:
    body = through_the_database(encoded_question(QUESTION))
    assert decoded_question(KIND, body) == QUESTION


def test_what_always_allow_would_remember_stays_with_the_holder() -> None:
    granting = PermissionQuestion("s1", replace(REQUEST, grant=RULE))
    body = through_the_database(encoded_question(granting))
    assert decoded_question(KIND, body) == QUESTION  # shown the same, grant-less


def test_a_question_of_another_kind_is_not_shown_here() -> None:
    # An older replica's row: the question as its client saw it.
    old = {"sessionId": "s1", "toolCall": {"toolCallId": "call-1"}}
    assert decoded_question("session/request_permission", old) is None


@pytest.mark.parametrize(
    "damage",
    [
        {"toolCallId": 5},
        {"kind": "teleport"},
        {"options": ["allow_sometimes"]},
        {"preview": [{"type": "hologram"}]},
        {"remembered": [{"cwd": "/w"}]},
        {"names": ["allow_once"]},
        {"locations": None},
    ],
)
def test_a_damaged_question_is_not_shown_here(damage: dict[str, Any]) -> None:
    body = {**encoded_question(QUESTION), **damage}
    assert decoded_question(KIND, body) is None


@pytest.mark.parametrize("option", [None, *PermissionOption])
def test_an_answer_comes_back_whole(option: PermissionOption | None) -> None:
    answer = PermissionAnswer(option)
    assert decoded_answer(through_the_database(encoded_answer(answer))) == answer


@pytest.mark.parametrize("damaged", [{"option": "allow_forever"}, {}, "allow_once", None])
def test_an_unreadable_answer_is_a_rejection(damaged: object) -> None:
    assert decoded_answer(damaged) == PermissionAnswer(PermissionOption.REJECT_ONCE)
