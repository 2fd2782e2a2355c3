"""An in-memory unit of work and the rule and checkpoint stores it carries beside the sessions."""

import itertools
from dataclasses import replace
from typing import Self

from application.ports.checkpoints import CheckpointStore, StoredUndo
from application.ports.project_rules import ProjectRuleRepository
from application.ports.unit_of_work import UnitOfWork
from domain.checkpoints import FileCheckpoint, Unrestorable
from domain.project_rules import ProjectRule
from tests.fakes.sessions import InMemorySessionRepository


class InMemoryProjectRules(ProjectRuleRepository):
    def __init__(self) -> None:
        self.rules: list[ProjectRule] = []
        self._ids = itertools.count(1)

    async def for_project(self, cwd: str) -> list[ProjectRule]:
        mine = [r for r in self.rules if r.cwd == cwd]
        return sorted(mine, key=lambda r: (r.created_at, r.id or 0))  # oldest first, as stored

    async def add(self, rule: ProjectRule) -> ProjectRule:
        existing = next((r for r in self.rules if r.same_grant(rule)), None)
        if existing is not None:
            return existing
        stored = replace(rule, id=next(self._ids))
        self.rules.append(stored)
        return stored

    async def list(self, cwd: str | None = None) -> list[ProjectRule]:
        chosen = [r for r in self.rules if cwd is None or r.cwd == cwd]
        return sorted(chosen, key=lambda r: (r.cwd, r.created_at, r.id or 0))

    async def revoke(self, rule_id: int) -> ProjectRule | None:
        found = next((r for r in self.rules if r.id == rule_id), None)
        if found is not None:
            self.rules.remove(found)
        return found

    async def clear(self, cwd: str) -> int:
        before = len(self.rules)
        self.rules = [r for r in self.rules if r.cwd != cwd]
        return before - len(self.rules)


class InMemoryCheckpoints(CheckpointStore):
    """Checkpoints and their contents, written at once (no staging)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[FileCheckpoint]] = {}
        self.blobs: dict[tuple[str, str], bytes] = {}
        self.undos: dict[str, StoredUndo] = {}
        self._seqs = itertools.count(1)

    async def keep_undo(self, session_id: str, undo: StoredUndo) -> None:
        self.undos[session_id] = undo

    async def undo(self, session_id: str) -> StoredUndo | None:
        return self.undos.get(session_id)

    async def drop_undo(self, session_id: str) -> None:
        self.undos.pop(session_id, None)

    async def checkpoints(self, session_id: str) -> list[FileCheckpoint]:
        return list(self.rows.get(session_id, []))

    async def has(self, session_id: str, message_id: str, path: str) -> bool:
        return self._index(session_id, message_id, path) is not None

    async def add(self, session_id: str, checkpoint: FileCheckpoint, content: bytes | None) -> None:
        if content is not None:
            self.blobs.setdefault((session_id, checkpoint.prior), content)
        stored = replace(checkpoint, seq=next(self._seqs))
        self.rows.setdefault(session_id, []).append(stored)

    async def written(self, session_id: str, message_id: str, path: str, after: str) -> None:
        index = self._index(session_id, message_id, path)
        if index is not None:
            rows = self.rows[session_id]
            rows[index] = replace(rows[index], after=after)

    async def content(self, session_id: str, state: str) -> bytes | None:
        return self.blobs.get((session_id, state))

    async def stored_bytes(self, session_id: str) -> int:
        return sum(len(b) for (sid, _), b in self.blobs.items() if sid == session_id)

    async def drop(self, session_id: str, seq: int) -> None:
        rows = self.rows[session_id]
        index = next(i for i, c in enumerate(rows) if c.seq == seq)
        rows[index] = dropped = replace(rows[index], unrestorable=Unrestorable.DROPPED)
        if not any(c.prior == dropped.prior and c.unrestorable is None for c in rows):
            self.blobs.pop((session_id, dropped.prior), None)

    def _index(self, session_id: str, message_id: str, path: str) -> int | None:
        rows = self.rows.get(session_id, [])
        return next(
            (i for i, c in enumerate(rows) if c.message_id == message_id and c.path == path), None
        )


class FakeUnitOfWork(UnitOfWork):
    """Changes are staged and applied to the shared repository only on commit."""

    def __init__(
        self,
        sessions: InMemorySessionRepository | None = None,
        rules: InMemoryProjectRules | None = None,
        checkpoints: "InMemoryCheckpoints | None" = None,
    ) -> None:
        self.sessions = sessions or InMemorySessionRepository()
        self.activity = self.listing = self.sessions
        self.rules = rules or InMemoryProjectRules()
        self.checkpoints: InMemoryCheckpoints = checkpoints or InMemoryCheckpoints()
        self.commits = 0

    def reading(self) -> Self:
        return self

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    async def commit(self) -> None:
        self.commits += 1
