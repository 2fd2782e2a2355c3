"""Validates JSON-RPC messages against the upstream ACP schema files, for the wire shapes
newer than the pinned Python SDK (notices, compaction updates, elicitation, the client
system prompt, subagent sessions, ...).

The files are copies of `schema/v1/schema.json` and `schema/v1/schema.unstable.json` from
the npm package `@agentclientprotocol/sdk` 2.4.0 (Apache-2.0, LICENSE beside them). The
root of either file accepts almost anything (its `anyOf` is not method-aware), so each
message is checked against the definition its method names: every definition carries
`x-method` and `x-side` (the side that receives it), and a response is checked against the
`…Response` definition of the request it answers, correlated by id.
"""

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator

from tests.support.senders import AGENT, CLIENT

SCHEMA_DIR = Path(__file__).parent / "acp_schema"
SCHEMA_RELEASE = "@agentclientprotocol/sdk 2.4.0"
Which = Literal["stable", "unstable"]
_FILES: dict[Which, str] = {"stable": "schema.json", "unstable": "schema.unstable.json"}


@cache
def schema(which: Which = "stable") -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / _FILES[which]).read_text())
    return loaded


@cache
def _methods(which: Which) -> dict[tuple[str, str, str], str]:
    """(receiving side, method, "call" | "result") -> definition name."""
    table: dict[tuple[str, str, str], str] = {}
    for name, node in schema(which)["$defs"].items():
        method, side = node.get("x-method"), node.get("x-side")
        if method is None or side is None:
            continue
        role = "result" if name.endswith("Response") else "call"
        if side == "protocol":
            for receiver in (AGENT, CLIENT):
                table[(receiver, method, role)] = name
        else:
            table[(side, method, role)] = name
    return table


@cache
def validator_for(definition: str, which: Which = "stable") -> Draft202012Validator:
    """A validator for one named definition of the schema file ($refs resolved inside it)."""
    root = schema(which)
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": root["$defs"]})


def problems_with(definition: str, value: Any, which: Which = "stable") -> list[str]:
    errors = sorted(validator_for(definition, which).iter_errors(value), key=str)
    return [f"{e.message} at /{'/'.join(str(p) for p in e.absolute_path)}" for e in errors[:3]]


def _receiver(sender: str) -> str:
    return CLIENT if sender == AGENT else AGENT


@dataclass
class SchemaFileValidator:
    """Feed it every message with its sender, as `WireValidator`; `problems` lists what
    was wrong. Methods the file does not know are named as problems unless they are
    extensions (a leading underscore)."""

    which: Which = "stable"
    problems: list[str] = field(default_factory=list)
    checked: int = 0
    _outstanding: dict[tuple[str, Any], str] = field(default_factory=dict)

    def check(self, sender: str, message: Any) -> None:
        self.checked += 1
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._fail(sender, message, "not a JSON-RPC 2.0 object")
        elif "method" in message:
            self._check_call(sender, message)
        else:
            self._check_response(sender, message)

    def assert_clean(self) -> None:
        assert self.checked, "no message was validated"
        assert not self.problems, "\n".join(self.problems)

    def _check_call(self, sender: str, message: dict[str, Any]) -> None:
        method = message["method"]
        definition = _methods(self.which).get((_receiver(sender), method, "call"))
        if definition is None:
            if not method.startswith("_"):
                self._fail(sender, message, f"{method!r} is not in {self.which} schema")
            return
        self._validate(definition, message.get("params"), sender, message)
        if "id" in message:
            self._outstanding[(sender, message["id"])] = method

    def _check_response(self, sender: str, message: dict[str, Any]) -> None:
        requester = _receiver(sender)
        method = self._outstanding.pop((requester, message.get("id")), None)
        if method is None or "result" not in message:
            return  # errors and answers to extension requests: the SDK validator's job
        definition = _methods(self.which).get((sender, method, "result"))
        if definition is not None:
            self._validate(definition, message["result"], sender, message)

    def _validate(self, definition: str, value: Any, sender: str, message: Any) -> None:
        for problem in problems_with(definition, value, self.which):
            self._fail(sender, message, f"{definition}: {problem}")

    def _fail(self, sender: str, message: Any, why: str) -> None:
        self.problems.append(f"{sender} sent an invalid message ({why}): {str(message)[:400]}")


def has_method(method: str, which: Which = "stable") -> bool:
    """Whether the file defines `method` (either way): the stable file lacks those still
    unstable, e.g. `session/fork` in 2.4.0."""
    return any(known == method for _, known, _ in _methods(which))
