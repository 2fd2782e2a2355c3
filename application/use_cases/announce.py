from application.commands import CommandRegistry
from application.ports.event_sink import EventSink
from application.runtime import SessionRegistry
from application.use_cases.background_tasks import BackgroundTasks
from application.use_cases.briefing import Briefer
from application.use_cases.context_meter import ContextMeter
from application.use_cases.model_request import RequestBuilder
from application.use_cases.session_servers import SessionServers
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
        commands: CommandRegistry,
        sink: EventSink,
        meter: ContextMeter,
        requests: RequestBuilder,
        servers: SessionServers | None = None,
        briefer: Briefer | None = None,
        catalog: Catalog | None = None,
        tasks: BackgroundTasks | None = None,
    ) -> None:
        self._sessions = sessions
        self._commands = commands
        self._sink = sink
        self._meter = meter
        self._requests = requests
        self._servers = servers
        self._briefer = briefer
        self._catalog = catalog  # to find what of the stored setup is not served (None: not)
        self._tasks = tasks

    async def execute(self, session_id: str, sink: EventSink | None = None) -> None:
        """Tell the session's clients, or only `sink` (a client attaching to it)."""
        sink = sink or self._sink
        active = self._sessions.find(session_id)
        if active is None:
            return
        session = active.session
        if self._servers is not None:
            await self._servers.connect(active)
            if active.closing:  # closed meanwhile: its client is told nothing more
                return
        if self._briefer is not None:
            # Its skills are commands and its files count; the environment waits for a turn.
            await self._briefer.gather(active, environment=False)
            if active.closing:
                return
        await sink.emit(session.id, CommandsAvailable(commands=self._offered(session.id)))
        used = self._meter.estimate(session, overhead=self._requests.overhead(session))
        await sink.emit(session.id, self._meter.report(session, used))
        if self._tasks is not None:  # tasks started before it attached: it sees them
            await self._tasks.tell_list(session.id, sink)
        await self._tell_problems(session, sink)

    async def _tell_problems(self, session: Session, sink: EventSink) -> None:
        """A warning notice for each setting this server no longer serves as stored (no
        agent text for a client without notices: it was never told, and is not now)."""
        if self._catalog is None:
            return
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
        active = self._sessions.find(session_id)
        if self._servers is None or active is None:
            return self._commands.specs()
        return self._servers.offered(active)
