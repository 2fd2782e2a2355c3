"""`iac-code acp ...`, parsed by a parser holding only the `acp` command, gives what the whole
command line's parser gives: the same arguments, the same help, the same errors."""

import argparse

import pytest

from bootstrap.cli import _parse, _parser

ACP_LINES = [
    ["acp"],
    ["acp", "--transport", "stdio"],
    ["acp", "--transport", "http", "--host", "0.0.0.0", "--port", "9000"],
    ["acp", "login"],
]
WRONG_LINES = [
    ["acp", "--bogus"],  # told with the whole command line's usage
    ["acp", "login", "now"],
    ["acp", "--transport", "pigeon"],
    ["acp", "--port", "eighty"],
    ["acp", "logout"],
    ["acp", "--help"],
    ["acp", "-h"],
]


@pytest.mark.parametrize("line", ACP_LINES)
def test_the_acp_command_parses_as_on_the_whole_command_line(line: list[str]) -> None:
    assert vars(_parse(line)) == vars(_parser().parse_args(line))


@pytest.mark.parametrize("line", WRONG_LINES)
def test_its_help_and_errors_are_the_same(
    line: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    said = []
    for parse in (_parse, _parser().parse_args):
        with pytest.raises(SystemExit) as exited:
            parse(line)
        said.append((exited.value.code, capsys.readouterr()))
    assert said[0] == said[1]
    assert said[0][1].out or said[0][1].err


def test_other_lines_get_every_command() -> None:
    for line in (["sessions", "list"], ["--version"], [], ["db", "upgrade"]):
        actions = _parser(line)._actions
        [commands] = [a for a in actions if isinstance(a, argparse._SubParsersAction)]
        assert {"acp", "db", "sessions", "permissions", "config", "login"} <= set(commands.choices)
