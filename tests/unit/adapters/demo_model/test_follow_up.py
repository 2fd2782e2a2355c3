"""The offline demo model: tool results, refusals and failures followed up, on the real tools."""

from pathlib import Path

import pytest

from adapters.llm.demo import DEMO_MODEL
from adapters.llm.demo_script import next_step
from adapters.tools.runner import LocalToolRunner
from application.ports.tools import ToolContext
from application.tools.permissions import DENIED
from domain.content import ToolUseBlock
from tests.unit.adapters.demo_model.support import LOCAL, NAMES, after, step_for, use


@pytest.mark.parametrize(
    ("call", "result", "expected"),
    [
        (use("list_files", path="."), "a.py\nsrc/", "`.` holds 2 entries: `a.py`, `src/`."),
        (use("list_files", path="e"), "(empty directory)", "`e` is empty."),
        (
            use("read_file", path="a.py"),
            "     1\t\n     2\timport os",
            "I read 2 lines of `a.py`. It begins: “import os”.",
        ),
        (use("grep", pattern="TODO"), "No matches.", "I found no matches."),
        (
            use("grep", pattern="TODO"),
            "a.py:3: # TODO x",
            "I found 1 matching line:\n- a.py:3: # TODO x",
        ),
        (
            use("write_file", path="n.txt", content="hi"),
            "Created /p/n.txt (2 bytes).",
            "Done. Created /p/n.txt (2 bytes).",
        ),
        (
            use("bash", command="ls"),
            "a.py\n\nExit code 0.",
            "The command finished. Exit code 0.\n```\na.py\n```",
        ),
    ],
)
def test_a_tool_result_is_described_and_the_turn_ends(
    call: ToolUseBlock, result: str, expected: str
) -> None:
    step = next_step(after(call, result), NAMES)
    assert step.tool is None
    assert step.text == expected


def test_a_rejected_permission_is_acknowledged_politely_and_the_turn_ends() -> None:
    step = next_step(after(use("write_file", path="n.txt", content="x"), DENIED), NAMES)
    assert step.tool is None
    assert step.text.startswith("Understood: you declined, so I did not write n.txt")
    assert "declined" in step.thinking


def test_a_failed_tool_is_reported() -> None:
    step = next_step(
        after(use("read_file", path="nope"), "No such file: nope", is_error=True), NAMES
    )
    assert step.text == "I could not read nope: No such file: nope"


@pytest.mark.integration
async def test_the_script_drives_the_real_tools_and_describes_their_output(
    tmp_path: Path,
) -> None:
    (tmp_path / "README.md").write_text("# Demo\nTODO: write docs\n")
    runner = LocalToolRunner(local=LOCAL)
    context = ToolContext(cwd=str(tmp_path), model=DEMO_MODEL)

    async def round_trip(request_text: str) -> str:
        call = step_for(request_text).tool
        assert call is not None
        result = await runner.run(call.name, call.input, context, _ignore)
        return next_step(after(call, result.text, is_error=result.is_error), NAMES).text

    assert await round_trip("list files") == "`.` holds 1 entry: `README.md`."
    assert (
        await round_trip("read README.md") == "I read 2 lines of `README.md`. It begins: “# Demo”."
    )
    assert "TODO: write docs" in await round_trip("search TODO")
    assert (await round_trip("create notes.txt with hello")).startswith("Done. Created ")
    assert (tmp_path / "notes.txt").read_text() == "hello"
    assert (await round_trip("edit notes.txt: replace hello with bye")).startswith("Done. Edited")
    assert (tmp_path / "notes.txt").read_text() == "bye"
    ran = await round_trip("run cat notes.txt")
    assert ran == "The command finished. Exit code 0.\n```\nbye\n```"


async def _ignore(chunk: str) -> None:
    pass
