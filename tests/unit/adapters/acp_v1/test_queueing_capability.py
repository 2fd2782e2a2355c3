"""Which clients queue their prompts, and the `/queue` command read beside a turn."""

from typing import Any

import pytest

from adapters.acp_v1.queueing import queue_command, queues_prompts
from domain.content import TextBlock


@pytest.mark.parametrize(
    "capabilities",
    [
        {"_meta": {"iac_code": {"promptQueueing": True}}},
        {"promptQueueing": True},
        {"promptQueueing": {}},
        {"_meta": {"promptQueueing": {}}},
        {"fs": {"readTextFile": True}, "_meta": {"iac_code": {"promptQueueing": True}}},
    ],
)
def test_a_client_that_asks_queues(capabilities: Any) -> None:
    assert queues_prompts(capabilities)


@pytest.mark.parametrize(
    "capabilities",
    [
        None,
        {},
        "promptQueueing",
        {"promptQueueing": False},
        {"promptQueueing": "yes"},
        {"_meta": {"iac_code": {"promptQueueing": "true"}}},
        {"_meta": {"iac_code": True}},
        {"_meta": []},
    ],
)
def test_anything_else_does_not(capabilities: Any) -> None:
    assert not queues_prompts(capabilities)


@pytest.mark.parametrize(
    ("text", "argument"),
    [("/queue", ""), ("/queue clear", "clear"), ("/queue   clear ", "clear"), ("/queue x", "x")],
)
def test_queue_commands(text: str, argument: str) -> None:
    assert queue_command((TextBlock(text=text),)) == argument


@pytest.mark.parametrize("text", ["queue", "//queue", "/queues", "/help", "tell me the /queue"])
def test_not_queue_commands(text: str) -> None:
    assert queue_command((TextBlock(text=text),)) is None
