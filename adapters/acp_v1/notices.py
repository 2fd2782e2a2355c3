"""Session notices on the wire (`session/update` with `sessionUpdate: "notice"`), a shape
newer than the pinned SDK: built here as a dict, as the schema file of
@agentclientprotocol/sdk 2.4.0 spells `Notice`.

A notice is rendered once (the update journal numbers and keeps it as it is) and shaped per
client as it is delivered: a client that advertised `clientCapabilities.session.notices`
gets the notice, any other the notice's agent-text fallback, or nothing. The fallback
travels with the notice in the params' `_meta.iac_code.fallback`, so a reconnecting client
served from the journal is shaped the same way; no client ever sees that key.
"""

from typing import Any

from adapters.acp_v1.updates import update_dict
from adapters.protocol.journal import META_KEY
from domain.events import SessionNotice

NOTICE = "notice"
_FALLBACK = "fallback"


def notice_update(event: SessionNotice) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": NOTICE,
        "severity": event.severity.value,
        "title": event.title,
    }
    if event.description:
        update["description"] = event.description
    if event.meta:
        update["_meta"] = {META_KEY: dict(event.meta)}
    return update


def notice_params(session_id: str, event: SessionNotice) -> dict[str, Any]:
    """The notification's params, the fallback (if any) kept beside it for delivery."""
    params: dict[str, Any] = {"sessionId": session_id, "update": notice_update(event)}
    fallback = update_dict(event.fallback) if event.fallback is not None else None
    if fallback is not None:
        params["_meta"] = {META_KEY: {_FALLBACK: fallback}}
    return params


def takes_notices(capabilities: Any) -> bool:
    """Whether `clientCapabilities` (as the client sent them) advertise `session.notices`:
    an object there (`{}`); omitted, null or anything else means no."""
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    return isinstance(session, dict) and isinstance(session.get("notices"), dict)


def shaped_for(params: dict[str, Any], capabilities: Any) -> dict[str, Any] | None:
    """`params` as one client is sent it: anything but a notice as it is; a notice as
    itself for a client that takes notices, else as its fallback (None: nothing to send).
    Other `_meta` (the journal's number, the turn state) is kept either way."""
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") != NOTICE:
        return params
    meta = params.get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    fallback = ours.get(_FALLBACK) if isinstance(ours, dict) else None
    shaped = _without_fallback(params, meta, ours)
    if takes_notices(capabilities):
        return shaped
    if not isinstance(fallback, dict):
        return None
    return {**shaped, "update": fallback}


def _without_fallback(params: dict[str, Any], meta: Any, ours: Any) -> dict[str, Any]:
    if not isinstance(ours, dict) or _FALLBACK not in ours:
        return params
    rest = {k: v for k, v in ours.items() if k != _FALLBACK}
    new_meta = {k: v for k, v in meta.items() if k != META_KEY}
    if rest:
        new_meta[META_KEY] = rest
    shaped = {k: v for k, v in params.items() if k != "_meta"}
    if new_meta:
        shaped["_meta"] = new_meta
    return shaped
