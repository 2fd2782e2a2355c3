"""`session/update` notifications as the agent writes them, for tests of how they travel."""

from pathlib import Path
from typing import Any


def session_update(update: dict[str, Any], session: str = "s1") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def text_chunk(
    text: str, *, message: str = "m1", session: str = "s1", kind: str = "agent_message_chunk"
) -> dict[str, Any]:
    update = {
        "sessionUpdate": kind,
        "content": {"type": "text", "text": text},
        "messageId": message,
    }
    return session_update(update, session)


def tool_update(call: str = "t1", session: str = "s1", **fields: Any) -> dict[str, Any]:
    return session_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": call, **fields}, session
    )


def chunk_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The texts of the `agent_message_chunk`s among JSON-RPC messages, in order."""
    return [
        m["params"]["update"]["content"]["text"]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1])
