"""`iac-code sessions list|show|rename|delete|import`: the session store, for a person at a
terminal."""

import asyncio
import json
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from adapters.legacy.flat_files import FlatFileSessions
from application.errors import SessionNotFound
from application.ports.session_listing import SessionSummary
from application.sessions.import_sessions import ImportSessions
from application.sessions.load_session import replay_events
from bootstrap.container import Container, migrated_container, release
from bootstrap.session_usage import currency_of, session_usage_json, turn_rows
from bootstrap.settings import Settings
from bootstrap.version import package_version
from domain.errors import InvalidTitle
from domain.events import (
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallUpdated,
    UserContentReplayed,
)
from domain.ids import SessionId
from domain.tool_call import DiffOutput, TextOutput


def table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        out.write("\n")


def directories_named(value: str) -> tuple[str, ...]:
    """The stored cwd(s) `--cwd value` may mean: relative to the current directory as the
    shell names it ($PWD, symlinks kept, as an editor sends its workspace's path), and the
    same with symlinks resolved, in case the editor sent that."""
    here = os.environ.get("PWD", "")
    if not (here and os.path.isabs(here) and os.path.samefile(here, os.curdir)):
        here = os.getcwd()
    named = os.path.normpath(os.path.join(here, os.path.expanduser(value)))
    resolved = str(Path(named).resolve())
    return (named,) if resolved == named else (named, resolved)


async def list_sessions(
    container: Container, cwds: tuple[str, ...] | None, as_json: bool, out: TextIO
) -> int:
    found: dict[str, SessionSummary] = {}
    for cwd in cwds or (None,):
        cursor = None
        while True:
            page = await container.list_sessions().execute(cwd, cursor)
            found |= {s.session_id: s for s in page.sessions}
            cursor = page.next_cursor
            if not cursor:
                break
    sessions = sorted(found.values(), key=lambda s: s.updated_at, reverse=True)
    if as_json:
        out.write(json.dumps([_listed_json(s) for s in sessions], indent=2) + "\n")
    elif not sessions:
        out.write("No sessions.\n")
    else:
        rows = [["ID", "UPDATED (UTC)", "MESSAGES", "TITLE", "CWD"]]
        rows += [
            [
                s.session_id,
                s.updated_at.strftime("%Y-%m-%d %H:%M"),
                str(s.message_count),
                (s.title or "")[:50],
                s.cwd,
            ]
            for s in sessions
        ]
        table(rows, out)
    return 0


def _listed_json(session: SessionSummary) -> dict[str, object]:
    return {
        "sessionId": session.session_id,
        "title": session.title,
        "cwd": session.cwd,
        "updatedAt": session.updated_at.isoformat(),
        "messageCount": session.message_count,
    }


def unknown_session(session_id: str) -> int:
    """What every `sessions` command says of an id the store does not hold."""
    sys.stderr.write(f"iac-code: no session {session_id!r}\n")
    return 1


async def show_session(container: Container, session_id: str, as_json: bool, out: TextIO) -> int:
    async with container.uow().reading() as uow:
        session = await uow.sessions.get(SessionId(session_id))
        records = await uow.activity.tool_calls(SessionId(session_id)) if session else {}
        turns = await uow.activity.turn_records(SessionId(session_id)) if session else []
    if session is None:
        return unknown_session(session_id)
    currency = currency_of(container.catalog(), session.model)
    if as_json:
        out.write(json.dumps(session_usage_json(session, turns, currency), indent=2) + "\n")
        return 0
    table(
        [
            ["ID", session.id],
            ["TITLE", session.title or ""],
            ["CWD", session.cwd],
            ["MODEL", session.model],
            ["CREATED", session.created_at.isoformat()],
            ["UPDATED", session.updated_at.isoformat()],
            ["MESSAGES", str(session.message_count)],
        ],
        out,
    )
    out.write("\n")
    if turns:
        table(turn_rows(turns, currency), out)
    else:
        out.write("No turns.\n")
    out.write("\n")
    for event in replay_events(session.messages, records):
        out.write(_line(event))
    return 0


def _line(event: object) -> str:
    match event:
        case UserContentReplayed(block=block):
            text = getattr(block, "text", None) or getattr(block, "uri", "") or type(block).__name__
            return f"> {text}\n"
        case ThinkingDelta(text=text):
            return f"  (thinking) {text[:200]}\n"
        case TextDelta(text=text):
            return f"{text}\n"
        case ToolCallStarted(title=title):
            return f"  [tool] {title}\n"
        case ToolCallUpdated(status=status, output=output):
            shown = ""
            for item in output or ():
                if isinstance(item, TextOutput):
                    shown = item.text.strip().splitlines()[0][:100] if item.text.strip() else ""
                elif isinstance(item, DiffOutput):
                    shown = f"diff of {item.path}"
            return f"         {status.value if status else ''}: {shown}\n"
    return ""


async def rename_session(container: Container, session_id: str, title: str, out: TextIO) -> int:
    try:
        new_title = await container.rename_session().execute(session_id, title)
    except SessionNotFound:
        return unknown_session(session_id)
    except InvalidTitle as exc:
        sys.stderr.write(f"iac-code: {exc}\n")
        return 1
    out.write(f"{session_id}: {new_title}\n")
    return 0


async def delete_session(container: Container, session_id: str, out: TextIO) -> int:
    """Through the use case an editor's session/delete runs."""
    if not await container.delete_session().execute(session_id):
        return unknown_session(session_id)
    out.write(f"deleted {session_id}\n")
    return 0


def not_a_source(source: Path) -> str | None:
    """Why `source` cannot hold the reference system's sessions, if it cannot."""
    if not source.is_dir():
        return f"{source}: no such directory (--from names the reference system's data directory)"
    if not (source / "projects").is_dir():
        return (
            f"{source} has no projects/ directory, where the reference system keeps its "
            "sessions: name its data directory with --from"
        )
    return None


async def import_sessions(
    container: Container, settings: Settings, source: Path, out: TextIO
) -> int:
    files = FlatFileSessions(source, default_model=settings.default_model)
    report = await ImportSessions(uow=container.uow(), source=files).execute()
    out.write(
        f"imported {len(report.imported)} session(s), {len(report.already_present)} "
        f"already present, {report.skipped_lines} corrupt line(s) skipped\n"
    )
    return 0


def run(settings: Settings, action: Callable[[Container], Coroutine[Any, Any, int]]) -> int:
    container = migrated_container(settings, package_version())

    async def main() -> int:
        try:
            return await action(container)
        finally:
            await release(container)

    return asyncio.run(main())
