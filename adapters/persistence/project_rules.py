import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, Select, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from adapters.persistence import tables
from adapters.persistence.dialect import insert_or_ignore, same_text
from application.ports.project_rules import ProjectRuleRepository
from domain.project_rules import CommandPattern, ProjectRule

R = tables.project_rules
_ORDER = (R.c.cwd, R.c.created_at, R.c.id)


def grant_key(command: CommandPattern | None) -> str:
    """What makes two grants of one tool in one project the same, as text: '' for a rule
    without a command, else the pattern (exact and prefix patterns of the same words differ)."""
    if command is None:
        return ""
    kind = "exact" if command.exact else "prefix"
    return f"{kind} {json.dumps(list(command.words), ensure_ascii=False)}"


def rule_to_row(rule: ProjectRule) -> dict[str, Any]:
    command = rule.command
    return {
        "cwd": rule.cwd,
        "tool_name": rule.tool_name,
        "command": list(command.words) if command else None,
        "exact": command.exact if command else None,
        "grant_key": grant_key(command),
        "created_at": rule.created_at,
        "session_id": rule.session_id,
    }


def rule_from_row(row: Mapping[str, Any]) -> ProjectRule:
    words = row["command"]
    command = None if words is None else CommandPattern(words=tuple(words), exact=row["exact"])
    return ProjectRule(
        id=row["id"],
        cwd=row["cwd"],
        tool_name=row["tool_name"],
        command=command,
        created_at=row["created_at"],
        session_id=row["session_id"],
    )


class SqlAlchemyProjectRuleRepository(ProjectRuleRepository):
    """Project rules over SQLite or PostgreSQL, in the unit of work's transaction."""

    def __init__(self, db: AsyncSession) -> None:
        self._db = db

    # Before `list` below: in the class body that name is the method, not the builtin.
    async def _all(self, query: Select[Any]) -> list[ProjectRule]:
        rows = (await self._db.execute(query)).mappings().all()
        return [rule_from_row(r) for r in rows]

    async def for_project(self, cwd: str) -> list[ProjectRule]:
        return await self._all(select(R).where(self._in(cwd)).order_by(*_ORDER))

    def _in(self, cwd: str) -> ColumnElement[bool]:
        return same_text(self._db, R.c.cwd, cwd)

    async def add(self, rule: ProjectRule) -> ProjectRule:
        row = rule_to_row(rule)
        # Insert-or-ignore, then read: two sessions granting the same rule at once both
        # end with the one stored row, whichever wrote it.
        await self._db.execute(insert_or_ignore(self._db, R, row))
        stored = await self._all(
            select(R).where(
                self._in(row["cwd"]),
                R.c.tool_name == row["tool_name"],
                same_text(self._db, R.c.grant_key, row["grant_key"]),
            )
        )
        return stored[0]

    async def list(self, cwd: str | None = None) -> list[ProjectRule]:
        query = select(R).order_by(*_ORDER)
        return await self._all(query if cwd is None else query.where(self._in(cwd)))

    async def revoke(self, rule_id: int) -> ProjectRule | None:
        found = await self._all(select(R).where(R.c.id == rule_id))
        if not found:
            return None
        await self._db.execute(delete(R).where(R.c.id == rule_id))
        return found[0]

    async def clear(self, cwd: str) -> int:
        removed = await self._db.execute(delete(R).where(self._in(cwd)).returning(R.c.id))
        return len(removed.all())
