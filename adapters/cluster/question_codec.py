"""A permission request and its answer as the replicas pass them to each other (in
`asked_questions`, and in the routed answer): the typed question, serialized, so that each
replica's clients are shown it in their own protocol version's shape.

What "always allow" would remember (`grant`) stays with the holder, which records the
answer: a mirror only shows the question. A body this replica cannot read (another
version's, a damaged row) is not shown here, and logged; an answer it cannot read counts
as a rejection, as a client's unreadable answer does.
"""

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from application.ports.permissions import PermissionRequest
from application.ports.questions import PermissionAnswer, PermissionQuestion
from domain.ids import ToolCallId
from domain.permission import PermissionOption
from domain.project_rules import CommandPattern, ProjectRule
from domain.tool_call import DiffOutput, TerminalOutput, TextOutput, ToolKind, ToolOutput

log = logging.getLogger(__name__)

KIND = "permission"  # the serialization below (AskedQuestion.kind)


def encoded_question(question: PermissionQuestion) -> dict[str, Any]:
    request = question.request
    return {
        "sessionId": question.session_id,
        "toolCallId": str(request.tool_call_id),
        "toolName": request.tool_name,
        "title": request.title,
        "kind": request.kind.value,
        "arguments": dict(request.arguments),
        "locations": list(request.locations),
        "preview": [_output(o) for o in request.preview],
        "options": [o.value for o in request.options],
        "remembered": [_rule(r) for r in request.remembered],
        "names": {o.value: name for o, name in request.names.items()},
        "ids": {o.value: id_ for o, id_ in request.ids.items()},
        "childSessionId": request.child_session_id,
        "agent": request.agent,
    }


def decoded_question(kind: str, body: Mapping[str, Any]) -> PermissionQuestion | None:
    """The question, or None when it cannot be read here (logged)."""
    if kind != KIND:
        log.warning("a relayed question of kind %r cannot be shown here", kind)
        return None
    try:
        request = PermissionRequest(
            tool_call_id=ToolCallId(_text(body["toolCallId"])),
            tool_name=_text(body["toolName"]),
            title=_text(body["title"]),
            kind=ToolKind(body["kind"]),
            arguments=dict(body["arguments"]),
            locations=tuple(_text(p) for p in body["locations"]),
            preview=tuple(_read_output(o) for o in body["preview"]),
            options=tuple(PermissionOption(o) for o in body["options"]),
            remembered=tuple(_read_rule(r) for r in body["remembered"]),
            names={PermissionOption(o): _text(n) for o, n in body["names"].items()},
            ids={PermissionOption(o): _text(i) for o, i in body["ids"].items()},
            child_session_id=_maybe_text(body.get("childSessionId")),
            agent=_maybe_text(body.get("agent")),
        )
        return PermissionQuestion(_text(body["sessionId"]), request)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        log.warning("a relayed question could not be read: %r", exc)
        return None


def encoded_answer(answer: PermissionAnswer) -> dict[str, Any]:
    return {"option": None if answer.option is None else answer.option.value}


def decoded_answer(encoded: object) -> PermissionAnswer:
    option = encoded.get("option", "") if isinstance(encoded, dict) else ""
    if option is None:
        return PermissionAnswer(None)  # cancelled
    try:
        return PermissionAnswer(PermissionOption(option))
    except ValueError:
        log.warning("a relayed answer %.200r is no option; read as a rejection", encoded)
        return PermissionAnswer(PermissionOption.REJECT_ONCE)


def _output(output: ToolOutput) -> dict[str, Any]:
    match output:
        case TextOutput(text=text):
            return {"type": "text", "text": text}
        case DiffOutput(path=path, old_text=old, new_text=new):
            return {"type": "diff", "path": path, "oldText": old, "newText": new}
        case TerminalOutput(terminal_id=terminal_id, text=text):
            return {"type": "terminal", "terminalId": terminal_id, "text": text}


def _read_output(encoded: Mapping[str, Any]) -> ToolOutput:
    match encoded["type"]:
        case "text":
            return TextOutput(text=_text(encoded["text"]))
        case "diff":
            old = _maybe_text(encoded["oldText"])
            path, new = _text(encoded["path"]), _text(encoded["newText"])
            return DiffOutput(path=path, old_text=old, new_text=new)
        case "terminal":
            terminal_id, text = _text(encoded["terminalId"]), _text(encoded["text"])
            return TerminalOutput(terminal_id=terminal_id, text=text)
    raise ValueError(f"no tool output of type {encoded['type']!r}")


def _rule(rule: ProjectRule) -> dict[str, Any]:
    command = rule.command
    return {
        "cwd": rule.cwd,
        "toolName": rule.tool_name,
        "command": None if command is None else {"words": command.words, "exact": command.exact},
        "createdAt": rule.created_at.isoformat(),
        "sessionId": rule.session_id,
        "id": rule.id,
    }


def _read_rule(encoded: Mapping[str, Any]) -> ProjectRule:
    command = encoded["command"]
    rule_id = encoded["id"]
    if rule_id is not None and (isinstance(rule_id, bool) or not isinstance(rule_id, int)):
        raise ValueError(f"a rule's id is {rule_id!r}")
    return ProjectRule(
        cwd=_text(encoded["cwd"]),
        tool_name=_text(encoded["toolName"]),
        command=None
        if command is None
        else CommandPattern(
            words=tuple(_text(w) for w in command["words"]), exact=bool(command["exact"])
        ),
        created_at=datetime.fromisoformat(_text(encoded["createdAt"])),
        session_id=_maybe_text(encoded["sessionId"]),
        id=rule_id,
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is no text")
    return value


def _maybe_text(value: object) -> str | None:
    return None if value is None else _text(value)
