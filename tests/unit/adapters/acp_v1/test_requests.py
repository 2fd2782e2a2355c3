"""The methods once read by hand (the `_iac_code/*` extensions, steering, set_config_option's
two shapes) are read through their routes' models, and refuse what they always refused in
the words they always used: the messages and `data` below are what the hand-written readers
answered (taken from them before they were replaced)."""

from typing import Any

import pytest

from adapters.acp_v1.agent import AcpAgent
from adapters.acp_v1.params import check_prompt
from adapters.acp_v1.rendering import V1Rendering
from adapters.acp_v1.requests import (
    ConfigOptionParams,
    EditPromptParams,
    RewindParams,
    SteeringParams,
)
from adapters.protocol.channels import SessionChannels
from adapters.protocol.dispatch import parse_params
from adapters.protocol.jsonrpc import RpcError
from application.attachments.room import Attachments
from application.rewind.rewind import OnConflict, RestoreFiles
from domain.steering import IdleBehavior

FORCE_OR_SKIP = "Invalid params: force and skip are booleans, and at most one of them is true."


def _agent() -> AcpAgent:
    room = Attachments(close=None, busy=None)  # type: ignore[arg-type]
    return AcpAgent(use_cases=None, room=room, channels=SessionChannels(room, V1Rendering()))  # type: ignore[arg-type]


ROUTES = _agent().routes

REFUSALS: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = [
    (
        "_iac_code/session/rename",
        {"sessionId": "s", "title": 3},
        {
            "code": -32602,
            "message": "Invalid params: sessionId and title must be strings.",
            "data": {"method": "_iac_code/session/rename", "fields": ["sessionId", "title"]},
        },
    ),
    (
        "_iac_code/session/rename",
        None,
        {
            "code": -32602,
            "message": "Invalid params: sessionId and title must be strings.",
            "data": {"method": "_iac_code/session/rename", "fields": ["sessionId", "title"]},
        },
    ),
    (
        "_iac_code/session/rewind_undo",
        {"sessionId": "s"},
        {
            "code": -32602,
            "message": "Invalid params: sessionId and undoToken must be strings.",
            "data": {
                "method": "_iac_code/session/rewind_undo",
                "fields": ["sessionId", "undoToken"],
            },
        },
    ),
    (
        "_iac_code/session/rewind_undo",
        {"sessionId": "s", "undoToken": "t", "force": True, "skip": True},
        {
            "code": -32602,
            "message": FORCE_OR_SKIP,
            "data": {
                "method": "_iac_code/session/rewind_undo",
                "fields": ["force", "skip"],
                "received": [True, True],
            },
        },
    ),
    (
        "_iac_code/session/rewind_undo",
        {"sessionId": "s", "undoToken": "t", "force": "yes"},
        {
            "code": -32602,
            "message": FORCE_OR_SKIP,
            "data": {
                "method": "_iac_code/session/rewind_undo",
                "fields": ["force", "skip"],
                "received": ["yes", False],
            },
        },
    ),
    (
        "_iac_code/session/rewind",
        {"sessionId": "s", "toMessageId": 1, "files": "bad"},
        {
            "code": -32602,
            "message": "Invalid params: sessionId and toMessageId must be strings.",
            "data": {"method": "_iac_code/session/rewind", "fields": ["sessionId", "toMessageId"]},
        },
    ),
    (
        "_iac_code/session/rewind",
        {"sessionId": "s", "toMessageId": "m", "files": "bad", "force": True, "skip": True},
        {
            "code": -32602,
            "message": "Invalid params: files must be one of ['keep', 'restore'].",
            "data": {
                "method": "_iac_code/session/rewind",
                "field": "files",
                "received": "bad",
                "supported": ["keep", "restore"],
            },
        },
    ),
    (
        "_iac_code/session/rewind",
        {"sessionId": "s", "toMessageId": "m", "force": 1},
        {
            "code": -32602,
            "message": "Invalid params: force and skip are booleans, and at most "
            "one of them is true.",
            "data": {
                "method": "_iac_code/session/rewind",
                "fields": ["force", "skip"],
                "received": [1, False],
            },
        },
    ),
    (
        "_iac_code/session/rewind",
        {"sessionId": "s", "toMessageId": "m", "files": "restore", "force": True, "skip": True},
        {
            "code": -32602,
            "message": "Invalid params: force and skip are booleans, and at most "
            "one of them is true.",
            "data": {
                "method": "_iac_code/session/rewind",
                "fields": ["force", "skip"],
                "received": [True, True],
            },
        },
    ),
    (
        "_iac_code/session/edit_prompt",
        {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]},
        {
            "code": -32602,
            "message": "Invalid params: messageId must be the id of a prompt the user sent.",
            "data": {
                "method": "_iac_code/session/edit_prompt",
                "field": "messageId",
                "received": None,
            },
        },
    ),
    (
        "_iac_code/session/edit_prompt",
        {"messageId": "m"},
        {
            "code": -32602,
            "message": "Invalid params for _iac_code/session/edit_prompt: "
            "sessionId: Input should be a valid string; prompt: Input should be a valid list",
            "data": {
                "method": "_iac_code/session/edit_prompt",
                "errors": [
                    {"field": "sessionId", "message": "Input should be a valid string"},
                    {"field": "prompt", "message": "Input should be a valid list"},
                ],
            },
        },
    ),
    (
        "_iac_code/session/edit_prompt",
        {"messageId": "m", "sessionId": "s", "prompt": [], "files": "bad"},
        {
            "code": -32602,
            "message": "Invalid params: prompt needs at least one block.",
            "data": {"field": "prompt"},
        },
    ),
    (
        "_iac_code/session/edit_prompt",
        {
            "messageId": "m",
            "sessionId": "s",
            "prompt": [{"type": "text", "text": "x"}],
            "files": "bad",
        },
        {
            "code": -32602,
            "message": "Invalid params: files must be one of ['keep', 'restore'].",
            "data": {
                "method": "_iac_code/session/edit_prompt",
                "field": "files",
                "received": "bad",
                "supported": ["keep", "restore"],
            },
        },
    ),
    (
        "_session/steering",
        {
            "sessionId": "s",
            "prompt": [{"type": "bogus"}],
            "idleBehavior": "x" * 80,
        },
        {
            "code": -32602,
            "message": "Invalid params for _session/steering: idleBehavior must be "
            "one of startNewTurn, fail.",
            "data": {
                "method": "_session/steering",
                "field": "idleBehavior",
                "allowed": ["startNewTurn", "fail"],
                "received": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            },
        },
    ),
    (
        "_session/steering",
        {"sessionId": "s", "idleBehavior": None},
        {
            "code": -32602,
            "message": "Invalid params for _session/steering: idleBehavior must be "
            "one of startNewTurn, fail.",
            "data": {
                "method": "_session/steering",
                "field": "idleBehavior",
                "allowed": ["startNewTurn", "fail"],
                "received": "NoneType",
            },
        },
    ),
    (
        "_session/steering",
        {"sessionId": "s", "prompt": "p"},
        {
            "code": -32602,
            "message": "Invalid params for _session/steering: prompt: Input should be a valid list",
            "data": {
                "method": "_session/steering",
                "errors": [{"field": "prompt", "message": "Input should be a valid list"}],
            },
        },
    ),
    (
        "_session/steering",
        {"sessionId": "s", "prompt": []},
        {
            "code": -32602,
            "message": "Invalid params: prompt needs at least one block.",
            "data": {"field": "prompt"},
        },
    ),
    (
        "session/set_config_option",
        {"sessionId": "s", "configId": "c", "type": "boolean", "value": "maybe"},
        {
            "code": -32602,
            "message": "Invalid params for session/set_config_option: value: Input should be a "
            "valid boolean, unable to interpret input",
            "data": {
                "method": "session/set_config_option",
                "errors": [
                    {
                        "field": "value",
                        "message": "Input should be a valid boolean, unable to interpret input",
                    }
                ],
            },
        },
    ),
    (
        "session/set_config_option",
        {"sessionId": "s", "configId": "c"},
        {
            "code": -32602,
            "message": "Invalid params for session/set_config_option: value: Field required",
            "data": {
                "method": "session/set_config_option",
                "errors": [{"field": "value", "message": "Field required"}],
            },
        },
    ),
]


def read(method: str, params: dict[str, Any] | None) -> Any:
    model = ROUTES[method].params
    assert model is not None
    return parse_params(model, params, method)


@pytest.mark.parametrize(("method", "params", "refused"), REFUSALS)
def test_each_method_refuses_in_the_words_it_always_used(
    method: str, params: dict[str, Any] | None, refused: dict[str, Any]
) -> None:
    with pytest.raises(RpcError) as caught:
        request = read(method, params)
        if hasattr(request, "prompt"):
            check_prompt(request.prompt)  # what their handlers check first
    assert caught.value.to_json() == refused


def test_the_routes_declare_the_models_of_the_methods_once_read_by_hand() -> None:
    assert ROUTES["_session/steering"].params is SteeringParams
    assert ROUTES["_iac_code/session/rewind"].params is RewindParams
    assert ROUTES["_iac_code/session/edit_prompt"].params is EditPromptParams
    assert ROUTES["session/set_config_option"].params is ConfigOptionParams


def test_what_the_models_read() -> None:
    prompt = [{"type": "text", "text": "x"}]
    steering = read(
        "_session/steering", {"sessionId": "s", "prompt": prompt, "idleBehavior": "fail"}
    )
    assert (steering.session_id, steering.idle_behavior) == ("s", IdleBehavior.FAIL)
    assert read("_session/steering", {"sessionId": "s", "prompt": prompt}).idle_behavior is (
        IdleBehavior.START_NEW_TURN
    )
    # Only by its wire name, as before: `idle_behavior` is no field a client sends.
    snake = read("_session/steering", {"sessionId": "s", "prompt": prompt, "idle_behavior": "fail"})
    assert snake.idle_behavior is IdleBehavior.START_NEW_TURN
    rewind = read(
        "_iac_code/session/rewind",
        {"sessionId": "s", "toMessageId": "m", "files": "restore", "skip": True},
    )
    assert rewind.restore_files() == RestoreFiles(OnConflict.SKIP)
    assert (
        read("_iac_code/session/rewind", {"sessionId": "s", "toMessageId": "m"}).restore_files()
        is None
    )
    edit = read(
        "_iac_code/session/edit_prompt",
        {"sessionId": "s", "messageId": "m", "prompt": prompt, "files": "restore", "force": True},
    )
    assert (edit.message_id, edit.restore_files()) == ("m", RestoreFiles(OnConflict.FORCE))
    boolean = read(
        "session/set_config_option",
        {"sessionId": "s", "configId": "c", "type": "boolean", "value": True},
    )
    assert boolean.root.value is True
    select = read("session/set_config_option", {"sessionId": "s", "configId": "c", "value": "v"})
    assert select.root.value == "v"
