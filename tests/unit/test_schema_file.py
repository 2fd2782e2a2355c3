"""The upstream schema files' validator: it must accept what the file allows and refuse
what it does not, per method and direction (the file's root would accept almost anything)."""

from tests.support.schema_file import AGENT, CLIENT, SchemaFileValidator, problems_with


def _update(update: dict[str, object]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }


def test_a_valid_update_and_prompt_round_trip_pass() -> None:
    v = SchemaFileValidator()
    v.check(
        CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    v.check(
        AGENT,
        _update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}}
        ),
    )
    v.check(AGENT, {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}})
    v.assert_clean()


def test_an_unknown_update_kind_and_a_bad_stop_reason_are_named() -> None:
    v = SchemaFileValidator()
    v.check(
        CLIENT,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": []},
        },
    )
    v.check(AGENT, _update({"sessionUpdate": "no_such_update"}))
    v.check(AGENT, {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "done"}})
    assert len(v.problems) == 2, v.problems


def test_a_method_the_file_does_not_have_is_a_problem_but_an_extension_is_not() -> None:
    v = SchemaFileValidator()
    v.check(AGENT, {"jsonrpc": "2.0", "method": "session/no_such_thing", "params": {}})
    v.check(AGENT, {"jsonrpc": "2.0", "method": "_iac_code/anything", "params": {}})
    assert len(v.problems) == 1 and "session/no_such_thing" in v.problems[0]


def test_the_unstable_file_knows_subagent_updates_and_the_stable_one_does_not() -> None:
    update = {"sessionUpdate": "subagent_update"}
    assert problems_with("SessionNotification", {"sessionId": "s", "update": update})
    unstable = SchemaFileValidator(which="unstable")
    unstable.check(AGENT, _update(update))
    assert unstable.problems  # still incomplete: a subagent update names its child
