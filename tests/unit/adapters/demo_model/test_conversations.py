"""The offline demo model in longer conversations: finding 16, questions to the user, messages
sent while a tool ran."""

from pathlib import Path

import pytest

from adapters.llm.demo_script import HELP, HELP_ORDER, INTENTS, next_step
from domain.content import TextBlock
from domain.context import model_view
from tests.factories import MessageFactory
from tests.unit.adapters.demo_model.support import NAMES, after, said, step_for, use


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
    readme = (Path(__file__).resolve().parents[4] / "README.md").read_text()
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
