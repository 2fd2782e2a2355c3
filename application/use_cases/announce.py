from application.commands import CommandRegistry
from application.ports.event_sink import EventSink
from application.runtime import SessionRegistry
from application.use_cases.background_tasks import BackgroundTasks
from application.use_cases.briefing import Briefer
from application.use_cases.context_meter import ContextMeter
from application.use_cases.model_request import RequestBuilder
from application.use_cases.session_servers import SessionServers
from domain.commands import CommandSpec
from domain.events import CommandsAvailable


class AnnounceSession:
    """What a client learns about a session right after opening it: the slash commands it
    offers, how full its context is, and its background tasks if it has any. Sent after
    the response that opened the session (clients attach their handlers for a session once
    they know its id)."""

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
        tasks: BackgroundTasks | None = None,
    ) -> None:
        self._sessions = sessions
        self._commands = commands
        self._sink = sink
        self._meter = meter
        self._requests = requests
        self._servers = servers
        self._briefer = briefer
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

    async def commands_changed(self) -> None:
        """The command list changed: every open session is sent the new one."""
        for session_id in self._sessions.open_ids():
            await self._sink.emit(session_id, CommandsAvailable(commands=self._offered(session_id)))

    def _offered(self, session_id: str) -> tuple[CommandSpec, ...]:
        active = self._sessions.find(session_id)
        if self._servers is None or active is None:
            return self._commands.specs()
        return self._servers.offered(active)
