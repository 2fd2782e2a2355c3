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


def tool_call(**fields: object) -> dict:
    return chunk({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Run", **fields})


def test_the_newer_schemas_tool_name_is_allowed_as_that_schema_types_it() -> None:
    v = WireValidator()
    v.check(AGENT, tool_call(name="mcp__github__create_issue"))
    v.check(AGENT, chunk({"sessionUpdate": "tool_call_update", "toolCallId": "t", "name": "bash"}))
    assert v.problems == []
    v.check(AGENT, tool_call(name=5))
    assert v.problems  # typed as the schema file types it
    unknown = WireValidator()
    unknown.check(AGENT, tool_call(tool="bash"))
    assert unknown.problems  # a key neither knows is still refused


def test_the_traffic_is_also_checked_against_the_schema_file() -> None:
    v = WireValidator()
    v.check(AGENT, chunk({"sessionUpdate": "usage_update", "used": -1, "size": 10}))
    assert any(p.startswith("stable schema file:") for p in v.problems), v.problems


def test_a_method_still_unstable_is_checked_against_the_unstable_file() -> None:
    fork = {"sessionId": "s", "cwd": "/p", "mcpServers": []}
    v = WireValidator()
    v.check(CLIENT, {"jsonrpc": "2.0", "id": 3, "method": "session/fork", "params": fork})
    v.check(AGENT, {"jsonrpc": "2.0", "id": 3, "result": {"sessionId": "s2"}})
    v.assert_clean()
    bad = WireValidator(strict_agent=False)
    bad.check(CLIENT, {"jsonrpc": "2.0", "id": 3, "method": "session/fork", "params": fork})
    bad.check(AGENT, {"jsonrpc": "2.0", "id": 3, "result": {"sessionId": 7}})
    assert any(p.startswith("unstable schema file:") for p in bad.problems), bad.problems
