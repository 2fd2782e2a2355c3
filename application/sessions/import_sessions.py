from dataclasses import dataclass, field

from application.ports.legacy import LegacySessionSource
from application.ports.unit_of_work import UnitOfWork
from domain.choices import Choices
from domain.history import repair
from domain.message import Role
from domain.session import Session, title_from
from domain.timestamps import Timestamps
from domain.workspace import Workspace


@dataclass(slots=True)
class ImportReport:
    imported: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    skipped_lines: int = 0


class ImportSessions:
    """Copy sessions from the reference system's files into the store, repaired.

    - Idempotent: a session id already stored is left as it is.
    - Keeps ids, cwd, titles and timestamps; a missing title comes from the first prompt.
    - Corrupt lines are skipped and counted, one transaction per session.
    """

    def __init__(self, *, uow: UnitOfWork, source: LegacySessionSource) -> None:
        self._uow = uow
        self._source = source

    async def execute(self) -> ImportReport:
        report = ImportReport()
        for found in self._source.sessions():
            legacy = found.session
            report.skipped_lines += found.skipped_lines
            messages = repair(legacy.messages)
            first_prompt = next(
                (m.visible_text() for m in messages if m.role is Role.USER and m.visible_text()),
                "",
            )
            session = Session.as_stored(
                id=legacy.id,
                workspace=Workspace(cwd=legacy.cwd),
                choices=Choices(model=legacy.model),
                title=legacy.title or title_from(first_prompt),
                timestamps=Timestamps(created_at=legacy.created_at, updated_at=legacy.updated_at),
                history=messages,
                version=0,  # a new row here
            )
            async with self._uow as uow:
                if await uow.sessions.get(session.id) is not None:
                    report.already_present.append(session.id)
                    continue
                await uow.sessions.add(session)
                await uow.commit()
            report.imported.append(session.id)
        return report
