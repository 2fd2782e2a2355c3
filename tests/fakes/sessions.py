"""An in-memory session store (SessionStore, ActivityLog, SessionListing) for use-case tests."""

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from application.errors import SessionConflict
from application.ports.session_listing import SessionListing, SessionSummary
from application.ports.session_store import ActivityLog, SessionStore, TurnRecord
from domain.choices import Choices
from domain.ids import SessionId
from domain.message import Message
from domain.permission import PermissionDecision, PermissionRules
from domain.session import Session
from domain.session_changes import MessageAdded, SettingChanged, TakenChanges, TitleGiven
from domain.spawn import Spawn
from domain.timestamps import Timestamps
from domain.tool_call import ToolCallRecord
from domain.turn import Turn
from domain.workspace import Workspace


@dataclass
class _Stored:
    settings: dict[str, object]
    messages: list[Message]
    tool_calls: dict[str, ToolCallRecord] = field(default_factory=dict)
    decisions: list[PermissionDecision] = field(default_factory=list)
    version: int = 0


def _settings(session: Session) -> dict[str, object]:
    return {
        "cwd": session.cwd,
        "title": session.title,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "model": session.model,
        "mode_id": session.mode_id,
        "config": dict(session.config),
        "additional_directories": session.additional_directories,
        "mcp_servers": session.mcp_servers,
        "system_prompt": session.system_prompt,
        "spawn": session.spawn,
    }


class InMemorySessionRepository(SessionStore, ActivityLog, SessionListing):
    """Keeps snapshots, like a database would: later changes to a Session object are only
    seen once they are stored through a method. Plays the store, the activity log and the
    listing (the contract tests hold it to the real ones)."""

    def __init__(self) -> None:
        self.stored: dict[SessionId, _Stored] = {}
        self.turns: list[tuple[SessionId, Turn, str | None]] = []

    @property
    def messages(self) -> dict[SessionId, list[Message]]:
        return {sid: s.messages for sid, s in self.stored.items()}

    @property
    def tool_calls_by_session(self) -> dict[SessionId, dict[str, ToolCallRecord]]:
        return {sid: s.tool_calls for sid, s in self.stored.items()}

    @property
    def decisions(self) -> dict[SessionId, list[PermissionDecision]]:
        return {sid: s.decisions for sid, s in self.stored.items()}

    async def get(self, session_id: SessionId) -> Session | None:
        stored = self.stored.get(session_id)
        if stored is None:
            return None
        rules = PermissionRules()
        for decision in stored.decisions:
            rules.learn(decision)
        s: dict[str, Any] = stored.settings  # as `_settings` wrote them
        return Session.as_stored(
            id=session_id,
            workspace=Workspace(
                cwd=s["cwd"],
                additional_directories=s["additional_directories"],
                mcp_servers=s["mcp_servers"],
                system_prompt=s["system_prompt"],
            ),
            choices=Choices(model=s["model"], mode_id=s["mode_id"], config=s["config"]),
            title=s["title"],
            timestamps=Timestamps(created_at=s["created_at"], updated_at=s["updated_at"]),
            history=list(stored.messages),
            version=stored.version,
            rejected_tools=rules.rejected,
            spawn=s["spawn"],
        )

    async def add(self, session: Session) -> None:
        session.take_changes()
        self.stored[session.id] = _Stored(_settings(session), list(session.messages))

    async def save(self, session: Session) -> None:
        taken = session.take_changes()
        if taken.changes:
            self.write(session, taken)

    def write(self, session: Session, taken: TakenChanges) -> None:
        """Store the changes taken from `session` (checked against the version it knew
        then); on a conflict they are put back."""
        stored = self.stored.get(session.id)
        added = [c for c in taken.changes if isinstance(c, MessageAdded)]
        settings = {c.setting for c in taken.changes if isinstance(c, SettingChanged)}
        fits = stored is not None and (
            stored.version == taken.version
            if settings or not added
            else len(stored.messages) == added[0].position
        )
        if stored is None or not fits:
            session.restore_changes(taken)
            raise SessionConflict("The session was changed elsewhere.", sessionId=session.id)
        mine = _settings(session)
        written = {"updated_at", *(name for s in settings for name in s.fields)}
        stored.settings.update({k: v for k, v in mine.items() if k in written})
        for change in taken.changes:
            if isinstance(change, TitleGiven) and stored.settings["title"] is None:
                stored.settings["title"] = change.title
        stored.messages.extend(c.message for c in added)
        stored.version += 1
        session.stored_as(stored.version, stored.settings["title"])  # type: ignore[arg-type]

    async def record_turn(self, session_id: SessionId, turn: Turn, error: str | None) -> None:
        self.turns.append((session_id, replace(turn), error))  # a snapshot, as stored

    async def turn_records(self, session_id: SessionId) -> list[TurnRecord]:
        mine = [
            TurnRecord(
                started_at=turn.started_at,
                finished_at=turn.finished_at,
                stop_reason=turn.stop_reason.value if turn.stop_reason else None,
                requests=turn.requests,
                usage=turn.usage,
                cost=turn.cost,
                error=error,
            )
            for sid, turn, error in self.turns
            if sid == session_id
        ]
        return sorted(mine, key=lambda r: r.started_at)  # stable: recording order breaks ties

    async def record_tool_call(self, session_id: SessionId, record: ToolCallRecord) -> None:
        self.stored[session_id].tool_calls[record.id] = record

    async def record_permission(self, session_id: SessionId, decision: PermissionDecision) -> None:
        self.stored[session_id].decisions.append(decision)

    async def tool_calls(self, session_id: SessionId) -> dict[str, ToolCallRecord]:
        return dict(self.stored[session_id].tool_calls)

    async def list_page(
        self,
        *,
        cwd: str | None,
        after: tuple[datetime, str] | None,
        limit: int,
        parent: str | None = None,
    ) -> list[SessionSummary]:
        rows = sorted(
            (
                (s.settings["updated_at"], sid, s)
                for sid, s in self.stored.items()
                if (cwd is None or s.settings["cwd"] == cwd) and _parent(s) == parent
            ),
            reverse=True,
        )
        if after is not None:
            rows = [r for r in rows if (r[0], r[1]) < after]
        return [
            SessionSummary(
                session_id=sid,
                cwd=s.settings["cwd"],  # type: ignore[arg-type]
                title=s.settings["title"],  # type: ignore[arg-type]
                updated_at=updated,
                message_count=len(s.messages),
                additional_directories=s.settings["additional_directories"],  # type: ignore[arg-type]
                spawn=s.settings["spawn"],  # type: ignore[arg-type]
            )
            for updated, sid, s in rows[:limit]
        ]

    async def fork(self, source: Session, fork: Session) -> None:
        fork.take_changes()
        parent = self.stored[source.id]
        self.stored[fork.id] = _Stored(
            _settings(fork),
            list(fork.messages),  # the copy's history, whatever the store holds since
            dict(parent.tool_calls),
            [d for d in parent.decisions if d.option is not None and d.option.remembered],
        )

    async def rewrite_history(self, session: Session, start: int) -> None:
        stored = self.stored.get(session.id)
        if stored is None or stored.version != session.version:
            raise SessionConflict("The session was changed elsewhere.", sessionId=session.id)
        stored.messages[start:] = session.messages[start:]
        stored.version += 1
        session.stored_as(stored.version, session.title)

    async def delete(self, session_id: SessionId, at: datetime) -> bool:
        for child_id in [sid for sid, s in self.stored.items() if _parent(s) == session_id]:
            await self.delete(child_id, at)  # its sub-agents' sessions go with it
        return self.stored.pop(session_id, None) is not None


def _parent(stored: _Stored) -> str | None:
    spawn = stored.settings["spawn"]
    return spawn.parent_id if isinstance(spawn, Spawn) else None
