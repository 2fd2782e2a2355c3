"""The permission rule as a table: every tool by every mode by inside/outside the working
directory by a project rule covering the call or not. Each row is written out, not computed."""

import itertools

import pytest

from domain.ids import ToolCallId
from domain.modes import ModeId
from domain.permission import (
    Decider,
    PermissionDecision,
    PermissionOption,
    PermissionRules,
    Verdict,
    decide,
)
from domain.tools import TOOLS, spec_for
from tests.factories import T0

A, Q, R, X = Verdict.ALLOW, Verdict.ASK, Verdict.REJECT, Verdict.REFUSE
MODES = (ModeId.DEFAULT, ModeId.ACCEPT_EDITS, ModeId.PLAN, ModeId.BYPASS)

# tool -> {(outside_cwd, project_rule): (default, accept_edits, plan, bypass)}
TABLE: dict[str, dict[tuple[bool, bool], tuple[Verdict, Verdict, Verdict, Verdict]]] = {
    "read_file": {
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "list_files": {
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "glob": {
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "grep": {
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "web_fetch": {
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),  # e.g. a private address: asked each time
        (True, True): (Q, Q, Q, Q),
    },
    "load_skill": {  # a skill's instructions: read, never asked about
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "write_file": {
        (False, False): (Q, A, X, A),
        (False, True): (A, A, X, A),
        (True, False): (Q, Q, X, Q),
        (True, True): (Q, Q, X, Q),
    },
    "edit_file": {
        (False, False): (Q, A, X, A),
        (False, True): (A, A, X, A),
        (True, False): (Q, Q, X, Q),
        (True, True): (Q, Q, X, Q),
    },
    "bash": {
        (False, False): (Q, Q, X, A),
        (False, True): (A, A, X, A),
        (True, False): (Q, Q, X, Q),
        (True, True): (Q, Q, X, Q),
    },
    "agent": {
        (False, False): (Q, Q, Q, A),
        (False, True): (A, A, A, A),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "exit_plan_mode": {  # always the user's choice
        (False, False): (Q, Q, Q, Q),
        (False, True): (Q, Q, Q, Q),
        (True, False): (Q, Q, Q, Q),
        (True, True): (Q, Q, Q, Q),
    },
    "todo_write": {  # the agent's plan: it touches nothing, so nothing asks or refuses it
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (A, A, A, A),
        (True, True): (A, A, A, A),
    },
    "ask_user": {  # a question to the user: it only asks, so no permission is asked for
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (A, A, A, A),
        (True, True): (A, A, A, A),
    },
    "task_output": {  # the session's own background tasks: read, never asked about
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (A, A, A, A),
        (True, True): (A, A, A, A),
    },
    "task_kill": {  # stops only what the session itself started (starting it asked)
        (False, False): (A, A, A, A),
        (False, True): (A, A, A, A),
        (True, False): (A, A, A, A),
        (True, True): (A, A, A, A),
    },
    "mystery_tool": {  # unknown tools are treated as running something
        (False, False): (Q, Q, X, A),
        (False, True): (A, A, X, A),
        (True, False): (Q, Q, X, Q),
        (True, True): (Q, Q, X, Q),
    },
}
CASES = [
    (tool, outside, rule, mode, row[i])
    for tool, rows in TABLE.items()
    for (outside, rule), row in rows.items()
    for i, mode in enumerate(MODES)
]


def test_the_table_covers_every_tool_and_case() -> None:
    assert set(TABLE) == {*TOOLS, "mystery_tool"}
    for rows in TABLE.values():
        assert set(rows) == set(itertools.product((False, True), repeat=2))


@pytest.mark.parametrize(("tool", "outside", "rule", "mode", "expected"), CASES)
def test_permission_table(
    tool: str, outside: bool, rule: bool, mode: str, expected: Verdict
) -> None:
    verdict = decide(spec_for(tool), mode, always_asks=outside, project_allows=rule)
    assert verdict is expected


@pytest.mark.parametrize(("tool", "outside", "rule", "mode", "expected"), CASES)
def test_always_reject_wins_except_where_plan_refuses_or_nothing_asks(
    tool: str, outside: bool, rule: bool, mode: str, expected: Verdict
) -> None:
    verdict = decide(spec_for(tool), mode, always_asks=outside, rejected=True, project_allows=rule)
    # todo_write, ask_user and the task tools are never asked about, so no user could have
    # rejected them: they stay allowed.
    never_asked = tool in ("todo_write", "ask_user", "task_output", "task_kill")
    assert verdict is (A if never_asked else X if expected is X else R)


def decision(tool: str, option: PermissionOption) -> PermissionDecision:
    return PermissionDecision(
        tool_call_id=ToolCallId("t"),
        tool_name=tool,
        arguments={},
        option=option,
        decided_by=Decider.USER,
        decided_at=T0,
    )


def test_a_session_remembers_only_always_reject() -> None:
    rules = PermissionRules()
    rules.learn(decision("bash", PermissionOption.ALLOW_ALWAYS))  # kept per project instead
    rules.learn(decision("write_file", PermissionOption.REJECT_ONCE))
    rules.learn(decision("edit_file", PermissionOption.REJECT_ALWAYS))
    assert rules.rejected == {"edit_file"}
    assert rules.rejects("edit_file") and not rules.rejects("bash")
