"""Validates every JSON-RPC message on the wire against JSON Schemas generated from the
official SDK's pydantic models (acp.schema), chosen per method and direction, and against
the newest upstream schema file too (`tests/support/schema_file.py`): every test that
validates its traffic here checks both.

pydantic's own `model_validate` is lenient (it drops bad fields), so it cannot be the
check; a per-method schema with no extra keys allowed is. The keys newer schema releases
added to a definition the pinned SDK mirrors (`NEWER_FIELDS`) are allowed with the newest
schema file's own definition of them: the SDK's schema is closed, not stale.
"""

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from acp import schema as acp
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from tests.support.schema_file import SchemaFileValidator, has_method, problems_with
from tests.support.schema_file import schema as schema_file
from tests.support.senders import AGENT, CLIENT

__all__ = ["AGENT", "CLIENT", "WireValidator"]

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
    # Unstable in the pinned SDK; checked against the newest schema file too (schema_file).
    "elicitation/create": (acp.CreateElicitationRequest, acp.CreateElicitationResponse),
    "elicitation/complete": (acp.CompleteElicitationNotification, None),
}
_OPEN = {"_meta", "rawInput", "rawOutput", "data"}  # free-form by the spec

# SDK model (its JSON schema's definition name) -> (the newest schema file's definition
# it mirrors, the keys that file added since the pinned SDK's release).
NEWER_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ToolCallStart": ("ToolCall", ("name",)),
    "ToolCallProgress": ("ToolCallUpdate", ("name",)),
    "ToolCallUpdate": ("ToolCallUpdate", ("name",)),
}


def _add_newer_fields(schema: dict[str, Any]) -> None:
    """Each newer key as the newest schema file defines it (no $ref inside those)."""
    newest = schema_file("stable")["$defs"]
    for name, (mirrored, keys) in NEWER_FIELDS.items():
        definition = schema.get("$defs", {}).get(name)
        if definition is None:
            continue
        for key in keys:
            definition["properties"].setdefault(key, newest[mirrored]["properties"][key])


# Fields newer than the pinned SDK whose newest definition holds $refs (so it cannot be
# spliced into the SDK's schema, as NEWER_FIELDS are), by (method, "params" | "result"):
# where each sits, and the definition of the newest schema file (tests.support.schema_file,
# unstable) that checks it. Each is taken out of a copy before the SDK's closed schema
# checks the rest, so nothing else loosens.
NEWER_THAN_SDK: dict[tuple[str, str], tuple[tuple[tuple[str, ...], str], ...]] = {
    ("initialize", "result"): (
        (
            ("agentCapabilities", "sessionCapabilities", "systemPrompt"),
            "SessionSystemPromptCapabilities",
        ),
    ),
}


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
    _add_newer_fields(schema)
    if strict:
        _close_objects(schema)
    return Draft202012Validator(schema)


@dataclass
class WireValidator:
    """Feed it every message with its sender; `problems` lists what was wrong."""

    strict_agent: bool = True
    problems: list[str] = field(default_factory=list)
    # The same traffic against the newest upstream schema file (False: the SDK's alone);
    # a method the stable file does not have yet (session/fork) against the unstable one.
    schema_files: bool = True
    _stable: SchemaFileValidator = field(default_factory=SchemaFileValidator)
    _unstable: SchemaFileValidator = field(
        default_factory=lambda: SchemaFileValidator(which="unstable")
    )
    checked: int = 0
    _outstanding: dict[tuple[str, Any], str] = field(default_factory=dict)
    # The agent's requests it withdrew with `$/cancel_request`: an answer may still come,
    # or none (a client's own cancelled requests are still answered: they stay outstanding).
    _withdrawn: set[Any] = field(default_factory=set)

    def check(self, sender: str, message: Any) -> None:
        self.checked += 1
        self._check_schema_file(sender, message)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._fail(sender, message, "not a JSON-RPC 2.0 object")
            return
        if "method" in message:
            self._check_call(sender, message)
        else:
            self._check_response(sender, message)

    def _check_schema_file(self, sender: str, message: Any) -> None:
        if not self.schema_files:
            return
        files = [self._stable]
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
            method = message.get("method")
            if method is None:  # a response: validated by the file that saw its request
                files.append(self._unstable)
            elif isinstance(method, str) and not has_method(method, "stable"):
                files = [self._unstable]  # unknown there too: the unstable file names it
        for file in files:
            seen = len(file.problems)
            file.check(sender, message)
            self.problems += [f"{file.which} schema file: {p}" for p in file.problems[seen:]]

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
            elif sender == CLIENT and "id" in message:  # ours: answered, not typed
                self._outstanding[(sender, message["id"])] = method
            return
        params_model, result_model = table[method]
        is_request = "id" in message
        if is_request != (result_model is not None):
            self._fail(sender, message, f"{method} sent as the wrong message kind")
        self._validate(params_model, message.get("params"), sender, message, method, "params")
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
        if method.startswith("_"):  # an extension's result has no schema to meet
            return
        table = CLIENT_METHODS if requester == CLIENT else AGENT_METHODS
        self._validate(table[method][1], message["result"], sender, message, method, "result")

    def _validate(
        self, model: Any, value: Any, sender: str, message: Any, method: str, role: str
    ) -> None:
        strict = self.strict_agent and sender == AGENT
        if sender == AGENT:
            value = self._without_newer(value, sender, message, method, role)
        errors = sorted(_validator(model, strict).iter_errors(value), key=str)
        for error in errors[:3]:
            path = "/".join(str(p) for p in error.absolute_path)
            self._fail(sender, message, f"{method}: {error.message} at /{path}")

    def _without_newer(self, value: Any, sender: str, message: Any, method: str, role: str) -> Any:
        """`value` without the fields of NEWER_THAN_SDK, each checked by the schema file."""
        newer = NEWER_THAN_SDK.get((method, role), ())
        if not newer or not isinstance(value, dict):
            return value
        value = copy.deepcopy(value)
        for path, definition in newer:
            parent = value
            for key in path[:-1]:
                parent = parent.get(key) if isinstance(parent, dict) else None
            if isinstance(parent, dict) and path[-1] in parent:
                field = parent.pop(path[-1])
                for problem in problems_with(definition, field, "unstable"):
                    self._fail(sender, message, f"{method}: {'.'.join(path)}: {problem}")
        return value

    def _fail(self, sender: str, message: Any, why: str) -> None:
        self.problems.append(f"{sender} sent an invalid message ({why}): {str(message)[:400]}")
