"""Whether a tool call may run: the session's rules decide, or the user is asked."""

from dataclasses import dataclass, replace

from application.ports.clock import Clock
from application.ports.event_sink import EventSink
from application.ports.permissions import PermissionRequest, PermissionUnavailable
from application.ports.tools import ChildCall, ToolPlan
from application.runtime.turn_control import TurnCancelled, TurnControl
from application.tools.permission_desk import PermissionDesk
from application.tools.sandbox_waivers import SandboxWaivers
from domain.config import Catalog
from domain.events import NoticeSeverity, SessionNotice
from domain.modes import stricter
from domain.permission import Decider, PermissionOption, Verdict, decide
from domain.project_rules import ProjectRule, rule_for
from domain.sandbox import SandboxLevel
from domain.session import Session
from domain.tool_call import TextOutput, ToolCallRecord
from domain.tools import BASH, Category, spec_for

DENIED = "Permission denied."
PLANNING = (
    "Not run: the session is in plan mode, where no file is changed and no command runs. "
    "Keep researching with the read-only tools, then call exit_plan_mode with your plan to "
    "ask the user to approve it."
)
# Allowed without asking and without a decision worth storing: reads inside cwd, the plan.
UNRECORDED = frozenset({Category.READ, Category.THINK, Category.TASKS})


@dataclass(frozen=True, slots=True)
class Answer:
    allowed: bool
    refusal: str = DENIED  # what the model is told when not allowed
    cancel_turn: bool = False  # the user cancelled the request: the turn ends


def always_name(grant: ProjectRule) -> str:
    """What "always allow" will remember, said on the option itself."""
    command = grant.command
    if command is None:
        return f"Always allow {grant.tool_name} in this project"
    if command.exact:
        return f"Always allow exactly `{command.text}` in this project"
    return f"Always allow `{command.text}` commands in this project"


class PermissionFlow:
    """Decides whether a call may run, and records why.

    - The session's rules decide first: reads inside cwd run at once; writes, execution
      and anything outside cwd ask the client; a project rule or the mode may allow, a
      session rule reject, plan mode refuse.
    - "Always allow" is offered only where it can be remembered safely and would apply
      again; an answer nobody gives in time, or a client that cannot answer, denies.
    """

    def __init__(
        self,
        *,
        desk: PermissionDesk,
        catalog: Catalog,
        clock: Clock,
        sink: EventSink,  # where a request nobody answered is told
        waivers: SandboxWaivers,
    ) -> None:
        self._waivers = waivers
        self._desk = desk
        self._catalog = catalog
        self._clock = clock
        self._sink = sink

    async def permit_child(
        self, session: Session, control: TurnControl, child: ChildCall
    ) -> str | None:
        """A sub-agent's call, decided as its parent's own would be (the parent's mode, or
        the agent's own where it is stricter; rules and clients), the request naming the
        child. None: it may run; else why not. A request the user cancelled refuses the
        child's call only."""
        answer = await self.permit(session, control, child.call, child.plan, child=child)
        return None if answer.allowed else answer.refusal

    async def permit(
        self,
        session: Session,
        control: TurnControl,
        call: ToolCallRecord,
        plan: ToolPlan,
        *,
        child: ChildCall | None = None,
    ) -> Answer:
        spec = spec_for(call.name)
        rules = [] if spec.category in UNRECORDED else await self._desk.project_rules(session)
        covering = next((r for r in rules if r.covers(call.name, call.arguments)), None)
        mode = self._catalog.usable_mode(session.mode_id)
        if child is not None:  # a named agent's own mode narrows its parent's, never widens
            mode = stricter(mode, child.mode)
        verdict = decide(
            spec,
            mode,
            always_asks=plan.always_asks,
            rejected=session.permissions.rejects(call.name),
            project_allows=covering is not None,
        )
        record = self._desk.record
        match verdict:
            case Verdict.ALLOW if spec.category in UNRECORDED:
                return Answer(allowed=True)
            case Verdict.ALLOW:
                decider = Decider.PROJECT_RULE if covering else Decider.MODE
                await record(session, call, PermissionOption.ALLOW_ONCE, decider)
                return Answer(allowed=True)
            case Verdict.REFUSE:
                await record(session, call, PermissionOption.REJECT_ONCE, Decider.MODE)
                return Answer(allowed=False, refusal=PLANNING)
            case Verdict.REJECT:
                await record(session, call, PermissionOption.REJECT_ALWAYS, Decider.SESSION_RULE)
                return Answer(allowed=False)
        return await self._ask(session, control, call, plan, rules, child)

    async def _ask(
        self,
        session: Session,
        control: TurnControl,
        call: ToolCallRecord,
        plan: ToolPlan,
        rules: list[ProjectRule],
        child: ChildCall | None,
    ) -> Answer:
        grant = None if plan.always_asks else self._grant(session, call)
        waivable = child is None and self._waivable(session, call)
        request = _request(call, plan, grant, rules, waivable=waivable)
        if child is not None:
            request = replace(request, child_session_id=child.child_id, agent=child.agent)
        record = self._desk.record
        try:
            chosen = await self._desk.ask(session, control, request)
        except TurnCancelled:
            await record(session, call, None, Decider.USER)
            return Answer(allowed=False, cancel_turn=True)
        except TimeoutError:
            await record(session, call, None, Decider.TIMEOUT)
            await self._tell_timeout(session, call)
            return Answer(
                allowed=False,
                refusal=(
                    f"Permission denied: nobody answered the permission request within "
                    f"{self._desk.timeout:g} s, so the tool did not run."
                ),
            )
        except PermissionUnavailable as exc:
            await record(session, call, None, Decider.CLIENT_ERROR)
            return Answer(allowed=False, refusal=f"Permission denied: {exc}")
        if chosen is PermissionOption.ALLOW_ALWAYS and grant is None:
            chosen = PermissionOption.ALLOW_ONCE  # not offered: never remembered
        if chosen is PermissionOption.ALLOW_ONCE_UNSANDBOXED:
            if not waivable:  # not offered: the sandbox stays
                chosen = PermissionOption.ALLOW_ONCE
            else:
                self._waivers.grant(call.id)
        await record(session, call, chosen, Decider.USER, grant=grant)
        if chosen is None:
            return Answer(allowed=False, cancel_turn=True)
        return Answer(allowed=chosen.allows)

    async def _tell_timeout(self, session: Session, call: ToolCallRecord) -> None:
        """A notice for a client with notices; any other sees the call fail, as before."""
        seconds = self._desk.timeout
        notice = SessionNotice(
            severity=NoticeSeverity.WARNING,
            title=f"Permission request timed out: {call.title}",
            description=(
                f"Nobody answered within {seconds:g} s, so the tool did not run; "
                "the model was told it was denied."
            ),
            meta={"permissionTimeout": {"toolCallId": call.id, "seconds": seconds}},
        )
        await self._sink.emit(session.id, notice)

    def _waivable(self, session: Session, call: ToolCallRecord) -> bool:
        """A command that would run sandboxed, where the ceiling allows none: the user may
        let this one run outside (its own option, never the default)."""
        rules = self._catalog.sandbox
        if call.name != BASH or rules is None or SandboxLevel.OFF not in rules.levels():
            return False
        return self._catalog.sandbox_policy(session.settings).confined

    def _grant(self, session: Session, call: ToolCallRecord) -> ProjectRule | None:
        """What "always allow" would remember: never a call outside the project, never a
        compound command."""
        return rule_for(
            cwd=session.cwd,
            tool_name=call.name,
            arguments=call.arguments,
            at=self._clock.now(),
            session_id=session.id,
        )


def _options(grant: ProjectRule | None, *, waivable: bool) -> tuple[PermissionOption, ...]:
    options: list[PermissionOption] = [
        o for o in PermissionOption if o is not PermissionOption.ALLOW_ONCE_UNSANDBOXED
    ]
    if grant is None:
        options.remove(PermissionOption.ALLOW_ALWAYS)
    if waivable:  # right after "allow once": the same answer, without the sandbox
        options.insert(1, PermissionOption.ALLOW_ONCE_UNSANDBOXED)
    return tuple(options)


def _request(
    call: ToolCallRecord,
    plan: ToolPlan,
    grant: ProjectRule | None,
    rules: list[ProjectRule],
    *,
    waivable: bool = False,
) -> PermissionRequest:
    reason = plan.ask_reason
    return PermissionRequest(
        tool_call_id=call.id,
        tool_name=call.name,
        # The user must see why a call that looks harmless is asked about.
        title=f"{call.title} ({reason})" if reason else call.title,
        kind=call.kind,
        arguments=call.arguments,
        locations=call.locations,
        preview=(TextOutput(text=reason), *plan.preview) if reason else plan.preview,
        options=_options(grant, waivable=waivable),
        grant=grant,
        names={PermissionOption.ALLOW_ALWAYS: always_name(grant)} if grant else {},
        remembered=tuple(r for r in rules if r.tool_name == call.name),
    )
