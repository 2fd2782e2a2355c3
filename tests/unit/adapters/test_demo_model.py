"""The offline demo model: a deterministic scripted agent (adapters/llm/demo*.py)."""

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.llm.demo import DEMO_MODEL, DemoLLMClient, tokens
from adapters.llm.demo_script import HELP, HELP_ORDER, INTENTS, MAX_REQUEST, next_step
from adapters.llm.demo_steps import Step
from adapters.tools.runner import LocalToolRunner
from adapters.workspace.local import LocalWorkspace
from application.ports.llm import (
    ModelEvent,
    ModelRequest,
    ModelResponse,
    TextChunk,
    ThinkingChunk,
    ToolUseStarted,
)
from application.ports.tools import ToolContext
from application.tools.permissions import DENIED
from domain.content import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.context import model_view
from domain.message import Message
from domain.stop_reason import ModelStop
from tests.factories import MessageFactory

TOOLS = LocalToolRunner().definitions()  # the tools a real session offers
NAMES = frozenset(t.name for t in TOOLS)

LOCAL = LocalWorkspace()  # the runner's workspace for contexts that bring none


def said(text: str) -> Message:
    return MessageFactory.build(content=(TextBlock(text=text),))


def step_for(text: str) -> Step:
    return next_step([said(text)], NAMES)


def after(call: ToolUseBlock, result: str, *, is_error: bool = False) -> list[Message]:
    """A conversation whose last message answers `call` with `result`."""
    return [
        said("do it"),
        MessageFactory.build(reply=True, content=(TextBlock(text="On it."), call)),
        MessageFactory.build(
            content=(ToolResultBlock(tool_use_id=call.id, content=result, is_error=is_error),)
        ),
    ]


def use(name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id="toolu_demo_001", name=name, input=arguments)


async def events(messages: list[Message], *, pace: float = 0) -> list[ModelEvent]:
    request = ModelRequest(
        model=DEMO_MODEL,
        system="You are a test.",
        messages=tuple(messages),
        max_tokens=100,
        tools=TOOLS,
    )
    return [e async for e in DemoLLMClient(pace=pace).stream(request)]


# ---- requests → tool calls ------------------------------------------------------------


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


# ---- tool results → follow-up ---------------------------------------------------------


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


# ---- streaming like a real model ------------------------------------------------------


async def test_the_stream_is_thinking_then_text_then_the_call_then_one_response() -> None:
    streamed = await events([said("read README.md")])
    kinds = [type(e) for e in streamed]
    first_text = kinds.index(TextChunk)
    assert set(kinds[:first_text]) == {ThinkingChunk}
    assert set(kinds[first_text:-2]) == {TextChunk}
    started = streamed[-2]
    response = streamed[-1]
    assert isinstance(response, ModelResponse) and response.stop is ModelStop.TOOL_USE
    thinking, text, call = response.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert thinking.thinking == "".join(e.text for e in streamed if isinstance(e, ThinkingChunk))
    assert text.text == "".join(e.text for e in streamed if isinstance(e, TextChunk))
    assert isinstance(call, ToolUseBlock) and call.name == "read_file"
    assert started == ToolUseStarted(id=call.id, name=call.name)  # announced before it ends
    assert len([e for e in streamed if isinstance(e, TextChunk)]) == len(text.text.split())
    # Usage counts words: the reply's, and the prompt's (system prompt included).
    assert response.usage.input_tokens == 6  # "You are a test." + "read README.md"
    assert response.usage.output_tokens == (
        len(thinking.thinking.split()) + len(text.text.split()) + 2  # tool name + path
    )


async def test_a_reply_without_tools_ends_the_turn() -> None:
    response = (await events([said("help")]))[-1]
    assert isinstance(response, ModelResponse) and response.stop is ModelStop.END_TURN


async def test_the_same_history_gives_the_same_stream() -> None:
    call = use("list_files", path=".")
    for history in ([said("plan a release")], after(call, "a.py\nb.py")):
        assert await events(history) == await events(history)


async def test_the_pace_spaces_out_every_token(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    streamed = await events([said("help")], pace=50)
    chunks = [e for e in streamed if isinstance(e, TextChunk | ThinkingChunk)]
    assert pauses == [pytest.approx(1 / 50)] * len(chunks)


async def test_pace_zero_streams_without_pausing(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(seconds: float) -> Iterator[None]:
        raise AssertionError("pace 0 must not sleep")

    monkeypatch.setattr(asyncio, "sleep", forbidden)
    assert isinstance((await events([said("help")], pace=0))[-1], ModelResponse)


def test_a_negative_pace_is_refused() -> None:
    with pytest.raises(ValueError, match="pace"):
        DemoLLMClient(pace=-1)


@pytest.mark.fuzz
@given(st.text())
def test_tokens_join_back_to_the_text(text: str) -> None:
    pieces = tokens(text)
    assert "".join(pieces) == text
    assert all(piece.strip() or piece is pieces[-1] for piece in pieces)


def test_finding_16_after_a_prompt_cancelled_before_any_reply_the_latest_request_is_read() -> None:
    """The cancelled prompt's words stay in the history with no reply after them, so the
    view the model gets merges them with the next prompt's into one user message. Each
    prompt carries its environment block, as the agent stores it."""
    environment = "<environment>\ncwd: /p\n</environment>"
    history = [
        MessageFactory.build(content=(TextBlock(text="help"),), context=environment),
        MessageFactory.build(content=(TextBlock(text="read a.txt"),), context=environment),
    ]
    [merged] = model_view(history)
    step = next_step([merged], NAMES)
    assert step.tool is not None
    assert (step.tool.name, step.tool.input) == ("read_file", {"path": "a.txt"})


def test_finding_16_a_commands_output_stays_verbatim_in_its_code_block() -> None:
    output = "total 8\n-rw-r--r--  1 me  staff    5 a.txt\n    indented\tand tabbed\n```inner```"
    step = next_step(after(use("bash", command="ls -l"), f"{output}\n\nExit code 0."), NAMES)
    assert step.text == f"The command finished. Exit code 0.\n````\n{output}\n````"


def test_finding_16_help_lists_every_request_once_in_its_fixed_order_help_last() -> None:
    listed = [line[2:] for line in HELP.splitlines() if line.startswith("- ")]
    assert listed == list(HELP_ORDER)
    assert sorted(listed) == sorted(intent.usage for intent in INTENTS)
    assert listed[-1].startswith("help")
    # README.md names them in the same order.
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    demo = " ".join(readme.split("**The offline demo model.**", 1)[1].split("\n\n", 1)[0].split())
    named = [demo.index(f"`{usage.split(' (')[0]}`") for usage in HELP_ORDER]
    assert named == sorted(named)


def test_ask_puts_a_question_to_the_user_when_the_client_shows_forms() -> None:
    with_ask = NAMES | {"ask_user"}
    step = next_step([said("ask me which branch: main, dev")], with_ask)
    assert step.tool is not None
    assert (step.tool.name, step.tool.input) == (
        "ask_user",
        {"question": "which branch", "choices": ["main", "dev"]},
    )
    free = next_step([said("ask what to call it?")], with_ask).tool
    assert free is not None and free.input == {"question": "what to call it?"}
    # Not offered (the client shows no forms): said so, nothing called.
    assert next_step([said("ask which branch: main, dev")], NAMES).tool is None


@pytest.mark.parametrize(
    ("result", "reply"),
    [
        ("The user answered: dev", "Thanks: you answered dev."),
        ("The user declined to answer.", "You declined to answer, so I'll go on without it."),
        (
            "The user cancelled the question.",
            "You dismissed the question; ask me again whenever you like.",
        ),
    ],
)
def test_the_answer_to_a_question_is_said_back(result: str, reply: str) -> None:
    asked = use("ask_user", question="which branch", choices=["main", "dev"])
    assert next_step(after(asked, result), NAMES | {"ask_user"}).text == reply


def test_a_message_sent_while_a_tool_ran_is_taken_up_after_its_result() -> None:
    """Steering: the provider's view joins the tool result and the user's added words in
    one message; the demo describes the result, then does what was added."""
    conversation = after(use("bash", command="ls"), "a.py\n\nExit code 0.")
    steered = MessageFactory.build(
        content=(*conversation[-1].content, TextBlock(text="also run pytest"))
    )
    step = next_step([*conversation[:-1], steered], NAMES)
    assert step.text.startswith("The command finished. Exit code 0.")
    assert "You added: “also run pytest”. I'll run `pytest`" in step.text
    assert step.tool is not None and step.tool.input == {"command": "pytest"}
    assert step.tool.id == "toolu_demo_002"  # a new call, not the one answered


@pytest.mark.parametrize("words", ["also list files", "And then list files", "oh and list files"])
def test_an_added_request_is_read_without_its_also(words: str) -> None:
    assert step_for(words) == step_for("list files")
