from application.agent_loop.parts import ModelSide
from application.knowledge.briefing import Briefer
from application.mcp.session_servers import SessionServers
from application.ports.event_sink import EventSink
from application.runtime.registry import SessionRegistry
from application.tasks.background_tasks import BackgroundTasks
from domain.commands import CommandSpec
from domain.config import Catalog
from domain.events import CommandsAvailable, NoticeSeverity, SessionNotice
from domain.session import Session
from domain.setup_problems import setup_problems


class AnnounceSession:
    """What a client learns about a session right after opening it: the slash commands it
    offers, how full its context is, its background tasks if it has any, and (a notice)
    what of its stored setup this server no longer serves."""

    def __init__(
        self,
        *,
        sessions: SessionRegistry,
        sink: EventSink,
        model: ModelSide,  # its meter and request builder: how full the context is
        servers: SessionServers,  # the commands offered: built in, MCP prompts, project's
        briefer: Briefer,
        catalog: Catalog,  # what of the stored setup is no longer served
        tasks: BackgroundTasks,
    ) -> None:
        self._sessions = sessions
        self._sink = sink
        self._meter = model.meter
        self._requests = model.requests
        self._servers = servers
        self._briefer = briefer
        self._catalog = catalog
        self._tasks = tasks

    async def execute(self, session_id: str, sink: EventSink | None = None) -> None:
        """Tell the session's clients, or only `sink` (a client attaching to it)."""
        sink = sink or self._sink
        active = self._sessions.find(session_id)
        if active is None:
            return
        session = active.session
        await self._servers.connect(active)
        if active.closing:  # closed meanwhile: its client is told nothing more
            return
        # Its skills are commands and its files count; the environment waits for a turn.
        await self._briefer.gather(active, environment=False)
        if active.closing:
            return
        await sink.emit(session.id, CommandsAvailable(commands=self._offered(session.id)))
        used = self._meter.estimate(session, overhead=self._requests.overhead(session))
        await sink.emit(session.id, self._meter.report(session, used))
        await self._tasks.tell_list(session.id, sink)  # tasks started before it attached
        await self._tell_problems(session, sink)

    async def _tell_problems(self, session: Session, sink: EventSink) -> None:
        """A warning notice for each setting this server no longer serves as stored (no
        agent text for a client without notices: it was never told, and is not now)."""
        for problem in setup_problems(self._catalog, session.settings):
            meta = {"setupProblem": {"setting": problem.setting, "stored": problem.stored}}
            notice = SessionNotice(
                severity=NoticeSeverity.WARNING,
                title=problem.title,
                description=problem.description,
                meta=meta,
            )
            await sink.emit(session.id, notice)

    async def commands_changed(self) -> None:
        """The command list changed: every open session is sent the new one."""
        for session_id in self._sessions.open_ids():
            await self._sink.emit(session_id, CommandsAvailable(commands=self._offered(session_id)))

    def _offered(self, session_id: str) -> tuple[CommandSpec, ...]:
        return self._servers.offered_for(self._sessions.find(session_id))
