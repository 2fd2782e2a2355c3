"""The validator used by the end-to-end tests must itself catch what it is there to catch."""

import pytest

from tests.support.wire_validator import AGENT, CLIENT, WireValidator

NEW = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "session/new",
    "params": {"cwd": "/p", "mcpServers": []},
}


def chunk(update: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }


def test_valid_exchange_passes() -> None:
    v = WireValidator()
    v.check(CLIENT, NEW)
    v.check(AGENT, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}})
    v.check(
        AGENT,
        chunk({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}),
    )
    v.assert_clean()


@pytest.mark.parametrize(
    "bad",
    [
        chunk(
            {"sessionUpdate": "agent_message_chunk_typo", "content": {"type": "text", "text": "x"}}
        ),
        chunk({"sessionUpdate": "current_mode_update", "modeId": "x"}),
        chunk(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "x"},
                "custom": 1,
            }
        ),
        {"jsonrpc": "2.0", "id": 5, "result": {}},
        {"id": 1, "result": {"sessionId": "s"}},
    ],
)
def test_bad_agent_messages_are_flagged(bad: dict) -> None:
    v = WireValidator()
    v.check(CLIENT, NEW)
    v.check(AGENT, bad)
    assert v.problems


def test_bad_results_are_flagged_per_method() -> None:
    v = WireValidator()
    v.check(
        CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": []},
        },
    )
    v.check(AGENT, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "done"}})
    assert any("stopReason" in p or "done" in p for p in v.problems)


def test_unanswered_requests_are_flagged() -> None:
    v = WireValidator()
    v.check(CLIENT, NEW)
    with pytest.raises(AssertionError, match="never answered"):
        v.assert_clean()


def _initialized(session_capabilities: dict) -> list[str]:
    v = WireValidator()
    v.check(
        CLIENT,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
    )
    result = {
        "protocolVersion": 1,
        "agentCapabilities": {"sessionCapabilities": session_capabilities},
    }
    v.check(AGENT, {"jsonrpc": "2.0", "id": 0, "result": result})
    return v.problems


def test_a_field_newer_than_the_sdk_is_checked_by_the_schema_file_alone() -> None:
    assert _initialized({"systemPrompt": {"mode": {"override": {}}}}) == []
    assert _initialized({"systemPrompt": {"mode": "override"}})  # the schema file's shape
    assert _initialized({"systemPrompt": {}, "madeUp": {}})  # the rest stays closed
