"""The reference system's session files: `projects/<project>/<sessionId>/metadata.json` with
`session.jsonl`, and the older `projects/<project>/<sessionId>.jsonl`. Each JSONL line is an
Anthropic-style message: {"role", "content"} with a string or a list of text, thinking,
tool_use and tool_result blocks."""

import json
import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from application.ports.legacy import LegacySession, LegacySessionSource
from domain.choices import Choices
from domain.content import ContentBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.errors import DomainError
from domain.ids import MessageId, SessionId
from domain.message import Message, Role
from domain.session import Session
from domain.timestamps import Timestamps
from domain.workspace import Workspace

log = logging.getLogger(__name__)


def _time(value: object, fallback: datetime) -> datetime:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / (1000 if value > 1e11 else 1), UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return fallback
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return fallback


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _block(data: Mapping[str, Any]) -> ContentBlock | None:
    match data.get("type"):
        case "text":
            return TextBlock(text=str(data["text"]))
        case "thinking":
            return ThinkingBlock(thinking=str(data["thinking"]), signature=data.get("signature"))
        case "tool_use":
            return ToolUseBlock(
                id=str(data["id"]), name=str(data["name"]), input=dict(data.get("input") or {})
            )
        case "tool_result":
            return ToolResultBlock(
                tool_use_id=str(data["tool_use_id"]),
                content=_result_text(data.get("content")),
                is_error=bool(data.get("is_error")),
            )
    return None


def _message(row: Mapping[str, Any], number: int, at: datetime) -> Message:
    role = Role(row["role"])
    content = row["content"]
    if isinstance(content, str):
        blocks: tuple[ContentBlock, ...] = (TextBlock(text=content),)
    else:
        blocks = tuple(b for b in (_block(d) for d in content) if b is not None)
    return Message(
        id=MessageId(f"legacy_{number}"),
        role=role,
        content=blocks,
        created_at=_time(row.get("timestamp"), at),
    )


def _read_jsonl(path: Path, at: datetime) -> tuple[list[Message], int, str | None]:
    messages: list[Message] = []
    skipped = 0
    cwd = None
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            cwd = cwd or (row.get("cwd") if isinstance(row.get("cwd"), str) else None)
            messages.append(_message(row, number, at))
        except (ValueError, KeyError, TypeError, AttributeError):
            skipped += 1
    return messages, skipped, cwd


def _project_path(project: str) -> str:
    """The older layout names project folders after the path, '/' written as '-'."""
    return "/" + project.strip("-").replace("-", "/")


class FlatFileSessions(LegacySessionSource):
    def __init__(self, root: Path, default_model: str) -> None:
        self._root = root
        self._model = default_model

    def sessions(self) -> Iterator[LegacySession]:
        projects = self._root / "projects"
        if not projects.is_dir():
            return
        for project in sorted(p for p in projects.iterdir() if p.is_dir()):
            for entry in sorted(project.iterdir()):
                try:
                    found = self._read(project, entry)
                except (OSError, ValueError, DomainError) as exc:
                    log.warning("skipping %s: %s", entry, exc)
                    continue
                if found is not None:
                    yield found

    def _read(self, project: Path, entry: Path) -> LegacySession | None:
        if entry.is_dir() and (entry / "session.jsonl").is_file():
            meta_file = entry / "metadata.json"
            meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
            return self._session(entry / "session.jsonl", meta, entry.name, project.name)
        if entry.is_file() and entry.suffix == ".jsonl":
            return self._session(entry, {}, entry.stem, project.name)
        return None

    def _session(
        self, jsonl: Path, meta: Mapping[str, Any], name: str, project: str
    ) -> LegacySession:
        modified = datetime.fromtimestamp(jsonl.stat().st_mtime, UTC)
        created = _time(meta.get("created_at"), modified)
        messages, skipped, row_cwd = _read_jsonl(jsonl, created)
        cwd = meta.get("cwd") or row_cwd or _project_path(project)
        session = Session.as_stored(
            id=SessionId(str(meta.get("session_id") or name)),
            workspace=Workspace(cwd=str(cwd)),
            choices=Choices(model=str(meta.get("model") or self._model)),
            title=meta.get("name") or None,
            timestamps=Timestamps(
                created_at=created, updated_at=_time(meta.get("updated_at"), modified)
            ),
            history=messages,
            version=0,  # a legacy file knows no versions
        )
        return LegacySession(session=session, skipped_lines=skipped, source=str(jsonl))
