"""Reading a prompt's first text block as a slash command (or not)."""

import pytest

from domain.commands import CommandCall, parse_command, unescape

KNOWN = frozenset({"compact", "clear", "help", "model"})


def test_a_known_name_alone_is_a_call_with_no_argument() -> None:
    assert parse_command("/help", KNOWN) == CommandCall(name="help", argument="")


def test_the_argument_is_the_rest_of_the_line_trimmed_at_its_ends() -> None:
    call = parse_command("/compact   the parser  and its tests  ", KNOWN)
    assert call == CommandCall(name="compact", argument="the parser  and its tests")


@pytest.mark.parametrize(
    ("text", "argument"),
    [
        ("/compact\nfocus on the parser", "focus on the parser"),
        ("/compact\nfirst line\nsecond line", "first line\nsecond line"),
        ("/compact\nfirst\nsecond line", "first\nsecond line"),
        ("/compact first line\nsecond line", "first line\nsecond line"),
        ("/compact\n   indented", "indented"),
        ("/compact\n", ""),
    ],
)
def test_the_argument_may_start_on_the_next_line(text: str, argument: str) -> None:
    assert parse_command(text, KNOWN) == CommandCall(name="compact", argument=argument)


def test_a_doubled_slash_is_no_call_and_unescapes_a_command_to_one_slash() -> None:
    assert parse_command("//help", KNOWN) is None
    assert unescape("//help", KNOWN) == "/help"
    assert unescape("//help me with /tmp", KNOWN) == "/help me with /tmp"


@pytest.mark.parametrize(
    "text",
    [
        "/help",
        "help",
        "/usr/bin/env",
        "",
        "a // b",
        " //help",
        "// a code comment",  # not a command's name after the pair
        "//usr/lib",
        "//helpme",
    ],
)
def test_unescape_leaves_anything_but_a_doubled_command_alone(text: str) -> None:
    assert unescape(text, KNOWN) == text


@pytest.mark.parametrize(
    "text",
    [
        "/word",  # not a command this server has
        "/usr/bin/env python3",  # a path
        "/^regex$/ matches what?",  # a regex
        "/compact/now",  # a known name glued to more
        "/helpme",
        "/Help",  # names are exact
        "/",
        "/ help",
        "",
        "help",
        "explain /help",
        " /help",  # leading whitespace: the prompt does not start with the command
        "\n/help",
    ],
)
def test_anything_else_goes_to_the_model_unchanged(text: str) -> None:
    assert parse_command(text, KNOWN) is None


def test_only_the_given_names_are_known() -> None:
    assert parse_command("/usage", KNOWN) is None
    assert parse_command("/usage", {"usage"}) == CommandCall(name="usage", argument="")


def test_an_argument_on_the_next_line_after_a_windows_line_break() -> None:
    # Clients on Windows send "\r\n": the command must still be read, not sent to the model.
    assert parse_command("/clear\r\n", KNOWN) == CommandCall(name="clear", argument="")
    assert parse_command("/compact\r\nthe parser", KNOWN) == CommandCall(
        name="compact", argument="the parser"
    )
