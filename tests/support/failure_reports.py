"""A pytest plugin (loaded by tests/conftest.py): a failure that cannot be formatted is still
reported as that test's failure, and the formatter's known crash is kept from happening.

Finding 8 of issue #42: an xdist worker raised `SystemError: AST constructor recursion depth
mismatch` from `ast.parse` while pytest formatted a failure, and the INTERNALERROR ended the
whole run. Nothing in this project changes the recursion limit (that would not cause it
either: `sys.setrecursionlimit` keeps each thread's depth). The cause is CPython's
gh-106905: in 3.11 and early 3.12 the counter that check uses lives in the interpreter, not
in the call, so two `ast.parse` calls building AST objects at once — pytest formatting a
failure on the main thread while another thread of the test process parses (Python 3.11
formats every traceback's carets with `ast.parse`; pydantic parses class sources for
attribute docstrings) — corrupt each other's count. Our test processes run such threads:
the agent is built in-process beside loader threads that log, scripted model servers answer
on threads, and `bootstrap/heavy_imports.py` shortens the thread switch interval tenfold
while it loads, which makes such overlaps far more frequent.
"""

import ast
import threading
import traceback
from collections.abc import Generator
from typing import Any

import pytest
from _pytest.reports import TestReport

_parsing = threading.RLock()
_parse = ast.parse


def _parse_alone(*args: Any, **kwargs: Any) -> Any:
    """ast.parse, one thread at a time (see the module's docstring)."""
    with _parsing:
        return _parse(*args, **kwargs)


ast.parse = _parse_alone


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, TestReport, TestReport]:
    try:
        return (yield)
    except Exception as crash:  # the run goes on, whatever broke the formatter
        return TestReport(
            item.nodeid,
            item.location,
            dict.fromkeys(item.keywords, 1),
            "failed",
            plain_failure(call, crash),
            call.when,
            duration=call.duration,
            start=call.start,
            stop=call.stop,
        )


def plain_failure(call: pytest.CallInfo[None], crash: Exception) -> str:
    """The failure as file/line/source lines, built without parsing anything (the
    formatter's own path parses), then what broke the formatter."""
    lines = []
    if call.excinfo is not None:
        for frame in traceback.extract_tb(call.excinfo.tb):
            lines.append(f'File "{frame.filename}", line {frame.lineno}, in {frame.name}')
            lines.append(f"    {frame.line}")
        lines.append(f"{call.excinfo.typename}: {call.excinfo.value}")
    lines.append(f"(pytest could not format this failure: {type(crash).__name__}: {crash})")
    return "\n".join(lines)
