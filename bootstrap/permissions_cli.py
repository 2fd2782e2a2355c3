"""`iac-code permissions list|revoke|clear`: the "always allow" answers remembered per project,
for a person at a terminal (or a script, with --json)."""

import json
import sys
from datetime import UTC
from typing import Any, TextIO

from bootstrap.container import Container
from bootstrap.sessions_cli import table
from domain.project_rules import ProjectRule


def rule_json(rule: ProjectRule) -> dict[str, Any]:
    command = rule.command
    return {
        "id": rule.id,
        "cwd": rule.cwd,
        "tool": rule.tool_name,
        "command": list(command.words) if command else None,
        "exact": command.exact if command else None,
        "createdAt": rule.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "sessionId": rule.session_id,
    }


def _write_json(value: object, out: TextIO) -> None:
    out.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


async def list_rules(container: Container, cwd: str | None, as_json: bool, out: TextIO) -> int:
    async with container.uow() as uow:
        rules = await uow.rules.list(cwd)
    if as_json:
        _write_json([rule_json(r) for r in rules], out)
    elif not rules:
        out.write("No remembered permissions.\n")
    else:
        header = ["ID", "PROJECT", "TOOL", "COVERS", "GRANTED (UTC)", "SESSION"]
        table([header, *(_row(r) for r in rules)], out)
    return 0


def _row(rule: ProjectRule) -> list[str]:
    return [
        str(rule.id),
        rule.cwd,
        rule.tool_name,
        rule.scope,
        rule.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
        rule.session_id or "-",
    ]


async def revoke_rule(container: Container, rule_id: int, as_json: bool, out: TextIO) -> int:
    async with container.uow() as uow:
        rule = await uow.rules.revoke(rule_id)
        await uow.commit()
    if rule is None:
        sys.stderr.write(
            f"iac-code: no remembered permission with id {rule_id} "
            "(`iac-code permissions list` shows them)\n"
        )
        return 1
    if as_json:
        _write_json(rule_json(rule), out)
    else:
        out.write(f"revoked {rule.id}: {rule.tool_name}, {rule.scope}, in {rule.cwd}\n")
    return 0


async def clear_rules(container: Container, cwd: str, as_json: bool, out: TextIO) -> int:
    async with container.uow() as uow:
        removed = await uow.rules.clear(cwd)
        await uow.commit()
    if as_json:
        _write_json({"cwd": cwd, "removed": removed}, out)
    else:
        out.write(f"removed {removed} remembered permission(s) of {cwd}\n")
    return 0
