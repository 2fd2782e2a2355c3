"""What a client opens a session with: `additionalDirectories`, `mcpServers` and
`systemPrompt`, read from the raw params. The SDK's models skip invalid entries silently (and
know no `systemPrompt` at all); a client deserves to hear which entry is wrong, so each one
is checked here (-32602 naming it), before any session is made or read."""

import os
from typing import Any

from acp import schema as acp
from pydantic import BaseModel, ValidationError

from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from application.dto import SessionOpening
from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.mcp import McpServerSpec, McpTransport

_SERVER_MODELS: dict[str, type[BaseModel]] = {
    McpTransport.STDIO: acp.McpServerStdio,
    McpTransport.HTTP: acp.HttpMcpServer,
    McpTransport.SSE: acp.SseMcpServer,
}


def _invalid(field: str, message: str, **data: Any) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {field} {message}", {"field": field, **data})


def _directories(raw: object) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _invalid("additionalDirectories", "must be a list of absolute paths.")
    seen: list[str] = []
    for index, entry in enumerate(raw):
        field = f"additionalDirectories[{index}]"
        if not isinstance(entry, str) or not os.path.isabs(entry):
            raise _invalid(field, "must be an absolute path.", path=entry, reason="not absolute")
        if not os.path.isdir(entry):
            raise _invalid(
                field, "is not an existing directory.", path=entry, reason="no such directory"
            )
        path = os.path.normpath(entry)
        if path not in seen:
            seen.append(path)
    return tuple(seen)


def _server(index: int, raw: object) -> McpServerSpec:
    field = f"mcpServers[{index}]"
    if not isinstance(raw, dict):
        raise _invalid(field, "must be an object.")
    kind = raw.get("type", McpTransport.STDIO.value)
    name = raw.get("name")
    if not isinstance(kind, str) or kind not in _SERVER_MODELS:  # a list is not even hashable
        raise _invalid(
            field,
            f"has type {kind!r}, which this agent does not connect (stdio, http and sse).",
            name=name,
            supported=[t.value for t in McpTransport],
        )
    try:
        parsed: Any = _SERVER_MODELS[kind].model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)[:3]
        )
        raise _invalid(field, f"is not a valid MCP server ({problems}).", name=name) from None
    if not parsed.name.strip():
        raise _invalid(field, "needs a name.", name=parsed.name)
    if kind == McpTransport.STDIO:
        if not parsed.command.strip():
            raise _invalid(field, "needs a command.", name=parsed.name)
        return McpServerSpec(
            name=parsed.name,
            transport=McpTransport.STDIO,
            command=parsed.command,
            args=tuple(parsed.args),
            env={v.name: v.value for v in parsed.env},
        )
    if not parsed.url.startswith(("http://", "https://")):
        raise _invalid(field, "needs an http:// or https:// url.", name=parsed.name)
    return McpServerSpec(
        name=parsed.name,
        transport=McpTransport(kind),
        url=parsed.url,
        headers={h.name: h.value for h in parsed.headers},
    )


def _servers(raw: object) -> tuple[McpServerSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _invalid("mcpServers", "must be a list.")
    servers = tuple(_server(index, entry) for index, entry in enumerate(raw))
    names = [s.name for s in servers]
    for index, name in enumerate(names):
        if name in names[:index]:
            raise _invalid(f"mcpServers[{index}]", f"repeats the server name {name!r}.", name=name)
    return servers


_PROMPT_MODES = [mode.value for mode in ClientPromptMode]


def _prompt_text(index: int, raw: object) -> str:
    field = f"systemPrompt.content[{index}]"
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind != "text":  # the schema's MUST: an error for any block the agent cannot use
        raise _invalid(
            field,
            "is not a text block: a system prompt holds text blocks only.",
            type=kind if isinstance(kind, str) else None,
            supported=["text"],
        )
    text = raw.get("text") if isinstance(raw, dict) else None
    if not isinstance(text, str):
        raise _invalid(field, "needs its text as a string.")
    return text


def _system_prompt(raw: object) -> ClientPrompt | None:
    """The client's system prompt; None when it gave none (omitted or null)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _invalid("systemPrompt", "must be an object with mode and content.")
    mode = raw.get("mode")
    if mode is None:
        raise _invalid("systemPrompt.mode", "is required.", supported=_PROMPT_MODES)
    if mode not in _PROMPT_MODES:  # never taken as another mode (the schema's MUST)
        raise _invalid(
            "systemPrompt.mode",
            f"{mode!r} is not a mode this agent supports (append, override).",
            mode=mode if isinstance(mode, str) else None,
            supported=_PROMPT_MODES,
        )
    content = raw.get("content")
    if not isinstance(content, list) or not content:
        raise _invalid("systemPrompt.content", "must be a non-empty list of text blocks.")
    texts = tuple(_prompt_text(index, block) for index, block in enumerate(content))
    return ClientPrompt(mode=ClientPromptMode(mode), texts=texts)


def session_opening(params: dict[str, Any] | None) -> SessionOpening:
    """Raises RpcError (-32602) naming the first entry that cannot be used."""
    params = params or {}
    return SessionOpening(
        additional_directories=_directories(params.get("additionalDirectories")),
        mcp_servers=_servers(params.get("mcpServers")),
        system_prompt=_system_prompt(params.get("systemPrompt")),
    )
