"""Reading a method's params: the SDK's model (its errors as -32602 naming each field), and
the checks the models do not make."""

import os
from typing import Any, TypeVar

from acp import schema as acp
from pydantic import BaseModel, ValidationError

from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from application.use_cases.rewind import OnConflict, RestoreFiles
from domain.steering import IdleBehavior

M = TypeVar("M", bound=BaseModel)


def parse_params(model: type[M], params: dict[str, Any] | None, method: str) -> M:
    try:
        return model.model_validate(params or {})
    except ValidationError as exc:
        errors = [
            {"field": ".".join(str(p) for p in e["loc"]) or "params", "message": e["msg"]}
            for e in exc.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:3])
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params for {method}: {summary}",
            {"method": method, "errors": errors},
        ) from None


def no_mcp_default(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The product documents (and their curl walkthrough) treat mcpServers as optional;
    the schema requires it. A missing list means no servers."""
    if isinstance(params, dict) and "mcpServers" not in params:
        return {**params, "mcpServers": []}
    return params


def check_cwd(cwd: str) -> None:
    if not os.path.isabs(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd must be an absolute path.",
            {"field": "cwd", "cwd": cwd, "reason": "not absolute"},
        )
    if not os.path.isdir(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd is not an existing directory.",
            {"field": "cwd", "cwd": cwd, "reason": "no such directory"},
        )


def check_list_cwd(cwd: str | None) -> None:
    """session/list's optional filter: absolute, but it need not exist any more."""
    if cwd is not None and not os.path.isabs(cwd):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: cwd must be an absolute path.",
            {"field": "cwd", "cwd": cwd},
        )


def rename_params(params: dict[str, Any] | None, method: str) -> tuple[str, str]:
    """The session id and title of the rename extension (no SDK model has them)."""
    session_id, title = (params or {}).get("sessionId"), (params or {}).get("title")
    if not isinstance(session_id, str) or not isinstance(title, str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: sessionId and title must be strings.",
            {"method": method, "fields": ["sessionId", "title"]},
        )
    return session_id, title


def rewind_params(
    params: dict[str, Any] | None, method: str
) -> tuple[str, str, RestoreFiles | None]:
    """The session id, the prompt to rewind to (no SDK model has them) and what to do with
    the files (`files`, with `force`/`skip` for files the user changed since)."""
    given = params or {}
    session_id, to_message_id = given.get("sessionId"), given.get("toMessageId")
    if not isinstance(session_id, str) or not isinstance(to_message_id, str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: sessionId and toMessageId must be strings.",
            {"method": method, "fields": ["sessionId", "toMessageId"]},
        )
    return session_id, to_message_id, files_option(given, method)


FILES_OPTIONS = ["keep", "restore"]


def files_option(given: dict[str, Any], method: str) -> RestoreFiles | None:
    """`files`: "keep" (the default: None) or "restore"; with "restore", `force: true`
    overwrites files the user changed since the agent did, `skip: true` leaves them."""
    files = given.get("files", "keep")
    if files not in (None, *FILES_OPTIONS):
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params: files must be one of {FILES_OPTIONS}.",
            {"method": method, "field": "files", "received": files, "supported": FILES_OPTIONS},
        )
    force, skip = given.get("force", False), given.get("skip", False)
    if not isinstance(force, bool) or not isinstance(skip, bool) or (force and skip):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: force and skip are booleans, and at most one of them is true.",
            {"method": method, "fields": ["force", "skip"], "received": [force, skip]},
        )
    if files != "restore":
        return None
    if force:
        return RestoreFiles(OnConflict.FORCE)
    return RestoreFiles(OnConflict.SKIP if skip else OnConflict.REFUSE)


def fork_point(meta: dict[str, Any] | None) -> str | None:
    """The prompt a `session/fork` forks before: `_meta.iac_code.atMessageId` (None: the
    whole history)."""
    ours = (meta or {}).get("iac_code")
    at = ours.get("atMessageId") if isinstance(ours, dict) else None
    if at is not None and not isinstance(at, str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: _meta.iac_code.atMessageId must be a message id (a string).",
            {"method": "session/fork", "field": "_meta.iac_code.atMessageId", "received": at},
        )
    return at


def edit_prompt_params(
    params: dict[str, Any] | None, method: str
) -> tuple[str, acp.PromptRequest, RestoreFiles | None]:
    """The prompt to rewind to (`messageId`), the prompt to send instead, read as
    session/prompt reads its own, and what to do with the files (as a rewind)."""
    given = params or {}
    message_id = given.get("messageId")
    if not isinstance(message_id, str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: messageId must be the id of a prompt the user sent.",
            {"method": method, "field": "messageId", "received": message_id},
        )
    request = parse_params(
        acp.PromptRequest,
        {"sessionId": given.get("sessionId"), "prompt": given.get("prompt")},
        method,
    )
    check_prompt(request)
    return message_id, request, files_option(given, method)


def rewind_undo_params(params: dict[str, Any] | None, method: str) -> tuple[str, str]:
    """The session id and the undo token a rewind answered with."""
    session_id, token = (params or {}).get("sessionId"), (params or {}).get("undoToken")
    if not isinstance(session_id, str) or not isinstance(token, str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: sessionId and undoToken must be strings.",
            {"method": method, "fields": ["sessionId", "undoToken"]},
        )
    return session_id, token


ConfigOptionRequest = (
    acp.SetSessionConfigOptionBooleanRequest | acp.SetSessionConfigOptionSelectRequest
)


def config_option_model(params: dict[str, Any] | None) -> type[ConfigOptionRequest]:
    """session/set_config_option's params are one of two shapes, told by `type`."""
    if (params or {}).get("type") == "boolean":
        return acp.SetSessionConfigOptionBooleanRequest
    return acp.SetSessionConfigOptionSelectRequest


def check_prompt(request: acp.PromptRequest) -> None:
    if not request.prompt:
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: prompt needs at least one block.",
            {"field": "prompt"},
        )


def steering_params(
    params: dict[str, Any] | None, method: str
) -> tuple[acp.PromptRequest, IdleBehavior]:
    """`_session/steering` is `session/prompt`'s shape (sessionId, prompt, _meta) plus an
    optional `idleBehavior`: what the message does when no turn runs."""
    rest = dict(params or {})
    idle = rest.pop("idleBehavior", IdleBehavior.START_NEW_TURN.value)
    allowed = [b.value for b in IdleBehavior]
    if idle not in allowed:
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params for {method}: idleBehavior must be one of {', '.join(allowed)}.",
            {
                "method": method,
                "field": "idleBehavior",
                "allowed": allowed,
                "received": idle[:64] if isinstance(idle, str) else type(idle).__name__,
            },
        )
    request = parse_params(acp.PromptRequest, rest, method)
    check_prompt(request)
    return request, IdleBehavior(idle)
