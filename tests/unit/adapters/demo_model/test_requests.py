"""The offline demo model (adapters/llm/demo*.py): each request becomes its tool call or answer."""

from typing import Any

import pytest

from adapters.llm.demo_script import HELP, INTENTS, MAX_REQUEST, next_step
from domain.content import ToolUseBlock
from tests.unit.adapters.demo_model.support import NAMES, after, said, step_for


@pytest.mark.parametrize(
    ("request_text", "tool", "arguments"),
    [
        ("list files", "list_files", {"path": "."}),
        ("List the files in src", "list_files", {"path": "src"}),
        ("ls docs/", "list_files", {"path": "docs/"}),
        ("show me the files", "list_files", {"path": "."}),
        ("read README.md", "read_file", {"path": "README.md"}),
        ("Please read `docs/http.md`.", "read_file", {"path": "docs/http.md"}),
        ("search TODO", "grep", {"pattern": "TODO"}),
        ("find 'foo bar' in src", "grep", {"pattern": "foo bar", "path": "src"}),
        ("grep a.b(c)?", "grep", {"pattern": r"a\.b\(c\)"}),
        ("create notes.txt with hello", "write_file", {"path": "notes.txt", "content": "hello"}),
        (
            "Create a file called notes.txt containing: two words",
            "write_file",
            {"path": "notes.txt", "content": "two words"},
        ),
        ("write 'hi there' to a.txt", "write_file", {"path": "a.txt", "content": "hi there"}),
        (
            "edit notes.txt: replace hello with bye",
            "edit_file",
            {"path": "notes.txt", "old_string": "hello", "new_string": "bye"},
        ),
        (
            "replace 'x = 1' with 'x = 2' in app.py",
            "edit_file",
            {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"},
        ),
        ("run ls", "bash", {"command": "ls"}),
        ("Can you run `pytest -q`?", "bash", {"command": "pytest -q"}),
        ("RUN echo hi > out.txt", "bash", {"command": "echo hi > out.txt"}),
        ("fetch https://example.com/page.", "web_fetch", {"url": "https://example.com/page"}),
    ],
)
def test_each_request_becomes_its_tool_call(
    request_text: str, tool: str, arguments: dict[str, Any]
) -> None:
    step = step_for(request_text)
    assert step.tool is not None, step.text
    assert (step.tool.name, dict(step.tool.input)) == (tool, arguments)
    assert step.thinking and step.text


@pytest.mark.parametrize("request_text", ["plan a refactor of auth", "Write a plan to migrate"])
def test_plan_is_a_numbered_plan_in_text_without_tools(request_text: str) -> None:
    step = step_for(request_text)
    assert step.tool is None
    assert "plan" in step.thinking
    assert [n for n in range(1, 10) if f"\n{n}. " in step.text] == [1, 2, 3, 4, 5]


def test_in_plan_mode_the_plan_goes_to_the_user_through_exit_plan_mode() -> None:
    step = next_step([said("plan a refactor of auth")], {*NAMES, "exit_plan_mode"})
    assert step.tool is not None and step.tool.name == "exit_plan_mode"
    assert step.tool.input == {"plan": step.text}


@pytest.mark.parametrize(
    ("result", "says"),
    [
        ("The user approved the plan. The session is now in accept-edits mode.", "approved"),
        ("The user did not approve the plan and wants to keep planning.", "stay in plan mode"),
    ],
)
def test_the_answer_to_a_plan_is_acknowledged(result: str, says: str) -> None:
    plan = ToolUseBlock(id="toolu_demo_001", name="exit_plan_mode", input={"plan": "1. x"})
    step = next_step(after(plan, result), {*NAMES, "exit_plan_mode"})
    assert step.tool is None and says in step.text


def test_help_lists_every_request_and_how_to_get_a_real_model() -> None:
    step = step_for("help")
    assert step.tool is None and step.text == HELP
    for intent in INTENTS:
        assert f"- {intent.usage}\n" in HELP
    assert "IAC_CODE_PROVIDER=anthropic" in HELP and "IAC_CODE_API_KEY" in HELP


def test_anything_else_is_answered_with_what_the_demo_understands() -> None:
    step = step_for("Hello agent")
    assert step.tool is None
    assert step.text == f"You said: Hello agent\n\n{HELP}"


def test_a_request_too_long_for_a_command_is_echoed_not_parsed() -> None:
    pasted = "replace a" + " with a" * 5_000 + " in x.py"
    assert len(pasted) > MAX_REQUEST
    step = step_for(pasted)
    assert step.tool is None and step.text.startswith(f"You said: {pasted}\n\n")


def test_a_tool_the_request_does_not_offer_is_not_called() -> None:
    step = next_step([said("run ls")], {"read_file"})
    assert step.tool is None and "bash" in step.text


def test_call_ids_are_unique_within_a_conversation() -> None:
    first = step_for("list files").tool
    assert first is not None
    history = [*after(first, "a.py"), said("list files")]
    second = next_step(history, NAMES).tool
    assert second is not None and second.id != first.id
