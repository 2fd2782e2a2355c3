"""Validates every JSON-RPC message on the wire against JSON Schemas generated from the
official SDK's pydantic models (acp.schema), chosen per method and direction.

pydantic's own `model_validate` is lenient (it drops bad fields), so it cannot be the
check; a per-method schema with no extra keys allowed is.
"""

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from acp import schema as acp
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

CLIENT, AGENT = "client", "agent"  # who sends the request

# method -> (params model, result model or None for notifications)
CLIENT_METHODS: dict[str, tuple[Any, Any]] = {
    "initialize": (acp.InitializeRequest, acp.InitializeResponse),
    "authenticate": (acp.AuthenticateRequest, acp.AuthenticateResponse),
    "logout": (acp.LogoutRequest, acp.LogoutResponse),
    "$/cancel_request": (acp.CancelRequestNotification, None),
    "session/new": (acp.NewSessionRequest, acp.NewSessionResponse),
    "session/load": (acp.LoadSessionRequest, acp.LoadSessionResponse),
    "session/list": (acp.ListSessionsRequest, acp.ListSessionsResponse),
    "session/resume": (acp.ResumeSessionRequest, acp.ResumeSessionResponse),
    "session/fork": (acp.ForkSessionRequest, acp.ForkSessionResponse),
    "session/close": (acp.CloseSessionRequest, acp.CloseSessionResponse),
    "session/delete": (acp.DeleteSessionRequest, acp.DeleteSessionResponse),
    "session/set_mode": (acp.SetSessionModeRequest, acp.SetSessionModeResponse),
    "session/set_config_option": (
        acp.SetSessionConfigOptionBooleanRequest | acp.SetSessionConfigOptionSelectRequest,
        acp.SetSessionConfigOptionResponse,
    ),
    "session/prompt": (acp.PromptRequest, acp.PromptResponse),
    "session/cancel": (acp.CancelNotification, None),
}
AGENT_METHODS: dict[str, tuple[Any, Any]] = {
    # Protocol-level, both ways: the agent withdraws its own requests with it too.
    "$/cancel_request": (acp.CancelRequestNotification, None),
    "session/update": (acp.SessionNotification, None),
    "session/request_permission": (acp.RequestPermissionRequest, acp.RequestPermissionResponse),
    "fs/read_text_file": (acp.ReadTextFileRequest, acp.ReadTextFileResponse),
    "fs/write_text_file": (acp.WriteTextFileRequest, acp.WriteTextFileResponse),
    "terminal/create": (acp.CreateTerminalRequest, acp.CreateTerminalResponse),
    "terminal/output": (acp.TerminalOutputRequest, acp.TerminalOutputResponse),
    "terminal/wait_for_exit": (acp.WaitForTerminalExitRequest, acp.WaitForTerminalExitResponse),
    "terminal/kill": (acp.KillTerminalRequest, acp.KillTerminalResponse),
    "terminal/release": (acp.ReleaseTerminalRequest, acp.ReleaseTerminalResponse),
}
_OPEN = {"_meta", "rawInput", "rawOutput", "data"}  # free-form by the spec


def _close_objects(node: Any, key: str | None = None) -> None:
    """No keys beyond the spec's (custom data belongs in _meta)."""
    if isinstance(node, dict):
        if "properties" in node and key not in _OPEN:
            node.setdefault("additionalProperties", False)
        for k, v in node.items():
            if k == "properties" and isinstance(v, dict):
                for name, sub in v.items():
                    if name not in _OPEN:
                        _close_objects(sub, name)
            else:
                _close_objects(v, k)
    elif isinstance(node, list):
        for item in node:
            _close_objects(item, key)


@cache
def _validator(model: Any, strict: bool) -> Draft202012Validator:
    schema = TypeAdapter(model).json_schema(by_alias=True, mode="validation")
    if strict:
        _close_objects(schema)
    return Draft202012Validator(schema)


@dataclass
class WireValidator:
    """Feed it every message with its sender; `problems` lists what was wrong."""

    strict_agent: bool = True
    problems: list[str] = field(default_factory=list)
    checked: int = 0
    _outstanding: dict[tuple[str, Any], str] = field(default_factory=dict)
    # The agent's requests it withdrew with `$/cancel_request`: an answer may still come,
    # or none (a client's own cancelled requests are still answered: they stay outstanding).
    _withdrawn: set[Any] = field(default_factory=set)

    def check(self, sender: str, message: Any) -> None:
        self.checked += 1
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._fail(sender, message, "not a JSON-RPC 2.0 object")
            return
        if "method" in message:
            self._check_call(sender, message)
        else:
            self._check_response(sender, message)

    def assert_clean(self, *, allow_unanswered: bool = False) -> None:
        assert self.checked, "no message was validated"
        assert not self.problems, "\n".join(self.problems)
        if not allow_unanswered:
            assert not self._outstanding, f"requests never answered: {self._outstanding}"

    def _check_call(self, sender: str, message: dict[str, Any]) -> None:
        method = message["method"]
        table = CLIENT_METHODS if sender == CLIENT else AGENT_METHODS
        if method not in table:
            if not method.startswith("_"):
                self._fail(sender, message, f"unknown method {method!r}")
            elif "id" in message:  # an extension request: outside the schema, still answered
                self._outstanding[(sender, message["id"])] = method
            return
        params_model, result_model = table[method]
        is_request = "id" in message
        if is_request != (result_model is not None):
            self._fail(sender, message, f"{method} sent as the wrong message kind")
        self._validate(params_model, message.get("params"), sender, message, method)
        if is_request:
            self._outstanding[(sender, message["id"])] = method
        elif sender == AGENT and method == "$/cancel_request":
            request_id = (message.get("params") or {}).get("requestId")
            if self._outstanding.pop((AGENT, request_id), None) is not None:
                self._withdrawn.add(request_id)

    def _check_response(self, sender: str, message: dict[str, Any]) -> None:
        requester = AGENT if sender == CLIENT else CLIENT
        has_result, has_error = "result" in message, "error" in message
        if has_result == has_error:
            self._fail(sender, message, "a response needs exactly one of result or error")
            return
        method = self._outstanding.pop((requester, message.get("id")), None)
        if method is None and requester == AGENT and message.get("id") in self._withdrawn:
            self._withdrawn.discard(message.get("id"))
            return  # a late answer to a withdrawn request
        if method is None:
            if message.get("id") is not None:
                self._fail(sender, message, "response to an id nobody asked")
            return
        if has_error:
            error = message["error"]
            if not (isinstance(error.get("code"), int) and isinstance(error.get("message"), str)):
                self._fail(sender, message, "error without integer code and string message")
            return
        table = CLIENT_METHODS if requester == CLIENT else AGENT_METHODS
        if method not in table:
            return  # an extension's answer: its shape is the extension's (tested by its tests)
        self._validate(table[method][1], message["result"], sender, message, method)

    def _validate(self, model: Any, value: Any, sender: str, message: Any, method: str) -> None:
        strict = self.strict_agent and sender == AGENT
        errors = sorted(_validator(model, strict).iter_errors(value), key=str)
        for error in errors[:3]:
            path = "/".join(str(p) for p in error.absolute_path)
            self._fail(sender, message, f"{method}: {error.message} at /{path}")

    def _fail(self, sender: str, message: Any, why: str) -> None:
        self.problems.append(f"{sender} sent an invalid message ({why}): {str(message)[:400]}")
