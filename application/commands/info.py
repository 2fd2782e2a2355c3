"""Commands that only tell: /usage and /help."""

from application.agent_loop.model_request import RequestBuilder
from application.compaction.context_meter import ContextMeter
from application.ports.event_sink import EventSink
from application.runtime.command_registry import CommandInput
from domain.commands import CommandSpec


class UsageCommand:
    spec = CommandSpec(
        name="usage", description="Tokens used so far, how full the context is, and the cost"
    )

    def __init__(self, *, meter: ContextMeter, requests: RequestBuilder, sink: EventSink) -> None:
        self._meter = meter
        self._requests = requests
        self._sink = sink

    async def run(self, command: CommandInput) -> str:
        session = command.session
        spent = session.spent
        used = self._meter.estimate(session, overhead=self._requests.overhead(session))
        window = self._meter.window(session)
        report = self._meter.report(session, used)
        cost = (
            f"{report.cost:.4f} {report.currency}"
            if report.cost is not None
            else f"not known (no prices for {session.model})"
        )
        await self._sink.emit(session.id, report)
        return "\n".join(
            [
                f"Tokens used in this session: {spent.total_tokens:,} "
                f"(input {spent.input_tokens:,}, output {spent.output_tokens:,}, "
                f"cache read {spent.cache_read_tokens:,}, "
                f"cache write {spent.cache_write_tokens:,})",
                f"Context: about {used:,} of {window:,} tokens "
                f"({used / window:.0%}) for {session.model}",
                f"Cost: {cost}",
            ]
        )


class HelpCommand:
    spec = CommandSpec(name="help", description="List the slash commands")

    async def run(self, command: CommandInput) -> str:
        lines = ["Slash commands (start a prompt with `//` to send a `/` to the model):"]
        for spec in command.offered:
            usage = f"/{spec.name}" + (f" <{spec.hint}>" if spec.hint else "")
            lines.append(f"- `{usage}`: {spec.description}")
        return "\n".join(lines)
