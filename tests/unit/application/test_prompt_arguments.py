"""Edge cases of reading an MCP prompt's arguments from what the user typed."""

import pytest

from application.mcp.session_servers import prompt_arguments
from application.ports.mcp import McpPrompt, McpPromptArgument

REVIEW = McpPrompt(
    name="mcp__s__review",
    server="s",
    description="",
    arguments=(McpPromptArgument(name="file", required=True), McpPromptArgument(name="focus")),
)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        # the last argument takes the rest as typed: apostrophes, spacing, line breaks
        (
            "app.py don't touch the tests, it's fine",
            {"file": "app.py", "focus": "don't touch the tests, it's fine"},
        ),
        ("app.py keep  two  spaces", {"file": "app.py", "focus": "keep  two  spaces"}),
        ("app.py first line\nsecond line", {"file": "app.py", "focus": "first line\nsecond line"}),
        # a backslash is a character, not an escape (a Windows path)
        (r"C:\src\app.py errors", {"file": r"C:\src\app.py", "focus": "errors"}),
        # quotes group one word, also as a named value
        ("'my file.py' x", {"file": "my file.py", "focus": "x"}),
        ('focus="a and b" app.py', {"file": "app.py", "focus": "a and b"}),
        ("app.py 'quoted rest'", {"file": "app.py", "focus": "quoted rest"}),
        # `=` after the name belongs to the value; an undeclared name is an ordinary word
        ("focus=a=b app.py", {"file": "app.py", "focus": "a=b"}),
        ("other=1 app.py", {"file": "other=1", "focus": "app.py"}),
        ("  app.py  ", {"file": "app.py"}),
    ],
)
def test_prompt_arguments_edge_cases(typed: str, expected: dict[str, str]) -> None:
    assert prompt_arguments(REVIEW, typed) == expected


def test_a_prompt_without_arguments_takes_none() -> None:
    bare = McpPrompt(name="mcp__s__hi", server="s", description="")
    assert prompt_arguments(bare, "hello there") == {}


def test_a_named_word_amid_the_rest_is_taken_by_its_name() -> None:
    assert prompt_arguments(REVIEW, "app.py look at file=x.py closely") == {
        "file": "x.py",
        "focus": "app.py look at closely",
    }
