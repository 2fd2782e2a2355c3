"""The permission decision on its own: the session's rules, then the user, with fakes for
the client and the store (no prompt, no model, no tool runs)."""

import asyncio
from dataclasses import dataclass, field, replace

import pytest

from application.ports.permissions import PermissionUnavailable
from application.ports.tools import ToolPlan
from application.runtime.turn_control import TurnControl
from application.tools.permission_desk import PermissionDesk
from application.tools.permissions import DENIED, PLANNING, Answer, PermissionFlow
from application.tools.sandbox_waivers import SandboxWaivers
from domain.config import Catalog
from domain.events import NoticeSeverity, SessionNotice
from domain.ids import ToolCallId
from domain.permission import Decider, PermissionOption
from domain.sandbox import SandboxLevel, SandboxRules
from domain.session import Session
from domain.tool_call import ToolCallRecord, ToolCallStatus
from domain.tools import spec_for
from tests.factories import SessionFactory
from tests.fakes.time_and_ids import FixedClock
from tests.fakes.turn import RecordingSink, ScriptedAsker
from tests.fakes.unit_of_work import FakeUnitOfWork
from tests.unit.application.world import CATALOG

# The four answers of a request without a sandbox to leave.
FOUR = (
    PermissionOption.ALLOW_ONCE,
    PermissionOption.ALLOW_ALWAYS,
    PermissionOption.REJECT_ONCE,
    PermissionOption.REJECT_ALWAYS,
)


@dataclass
class Fakes:
    asker: ScriptedAsker = field(default_factory=ScriptedAsker)
    uow: FakeUnitOfWork = field(default_factory=FakeUnitOfWork)
    timeout: float = 5.0
    sink: RecordingSink = field(default_factory=RecordingSink)
    catalog: Catalog = CATALOG
    waivers: SandboxWaivers = field(default_factory=SandboxWaivers)

    def flow(self) -> PermissionFlow:
        clock = FixedClock()
        desk = PermissionDesk(asker=self.asker, uow=self.uow, clock=clock, timeout=self.timeout)
        return PermissionFlow(
            desk=desk, catalog=self.catalog, clock=clock, sink=self.sink, waivers=self.waivers
        )

    async def session(self, mode: str = "default") -> Session:
        """A session in `mode`, stored: decisions are recorded against it."""
        session: Session = SessionFactory(cwd="/work", model="m1", mode_id=mode)
        await self.uow.sessions.add(session)
        return session

    def decided(self, session: Session) -> list[tuple[PermissionOption | None, Decider]]:
        return [(d.option, d.decided_by) for d in self.uow.sessions.decisions[session.id]]


def call(name: str, **arguments: object) -> ToolCallRecord:
    return ToolCallRecord(
        id=ToolCallId("toolu_1"),
        name=name,
        title=name,
        kind=spec_for(name).kind,
        arguments=arguments,
        status=ToolCallStatus.PENDING,
    )


async def permit(
    fakes: Fakes, s: Session, c: ToolCallRecord, plan: ToolPlan | None = None
) -> Answer:
    return await fakes.flow().permit(s, TurnControl(), c, plan or ToolPlan())


async def test_a_read_inside_cwd_runs_unasked_and_leaves_no_decision() -> None:
    fakes = Fakes()
    s = await fakes.session()
    assert await permit(fakes, s, call("read_file", path="a.py")) == Answer(allowed=True)
    assert fakes.asker.requests == []
    assert fakes.uow.sessions.decisions.get(s.id, []) == []


async def test_plan_mode_refuses_a_command_without_asking() -> None:
    fakes = Fakes()
    s = await fakes.session("plan")
    answer = await permit(fakes, s, call("bash", command="make"))
    assert answer == Answer(allowed=False, refusal=PLANNING)
    assert fakes.asker.requests == []
    assert fakes.decided(s) == [(PermissionOption.REJECT_ONCE, Decider.MODE)]


async def test_always_allow_is_offered_named_and_remembered_for_the_project() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.ALLOW_ALWAYS))
    s = await fakes.session()
    assert await permit(fakes, s, call("bash", command="make test")) == Answer(allowed=True)
    (request,) = fakes.asker.requests
    assert request.options == FOUR
    assert request.option_name(PermissionOption.ALLOW_ALWAYS) == (
        "Always allow `make test …` commands in this project"
    )
    (rule,) = fakes.uow.rules.rules
    assert (rule.cwd, rule.tool_name, rule.session_id) == ("/work", "bash", s.id)
    assert fakes.decided(s) == [(PermissionOption.ALLOW_ALWAYS, Decider.USER)]
    # The rule now covers the same call: it runs unasked, decided by the project's rule.
    assert await permit(fakes, s, call("bash", command="make test")) == Answer(allowed=True)
    assert len(fakes.asker.requests) == 1
    assert fakes.decided(s)[-1] == (PermissionOption.ALLOW_ONCE, Decider.PROJECT_RULE)


async def test_a_call_that_always_asks_is_never_remembered() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.ALLOW_ALWAYS))
    s = await fakes.session()
    outside = ToolPlan(locations=("/etc/hosts",), outside_cwd=True)
    assert await permit(fakes, s, call("read_file", path="/etc/hosts"), outside) == Answer(
        allowed=True
    )
    assert PermissionOption.ALLOW_ALWAYS not in fakes.asker.requests[0].options
    assert fakes.uow.rules.rules == []
    assert fakes.decided(s) == [(PermissionOption.ALLOW_ONCE, Decider.USER)]


async def test_the_reason_a_call_must_ask_is_shown_in_its_title_and_preview() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.REJECT_ONCE))
    s = await fakes.session()
    plan = ToolPlan(ask_reason="a private network address")
    assert await permit(fakes, s, call("web_fetch", url="http://10.0.0.1"), plan) == Answer(
        allowed=False, refusal=DENIED
    )
    (request,) = fakes.asker.requests
    assert request.title == "web_fetch (a private network address)"
    assert request.preview[0].text == "a private network address"  # type: ignore[union-attr]


async def test_always_reject_holds_for_the_rest_of_the_session() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.REJECT_ALWAYS))
    s = await fakes.session()
    assert not (await permit(fakes, s, call("bash", command="rm -r build"))).allowed
    assert await permit(fakes, s, call("bash", command="ls")) == Answer(allowed=False)
    assert fakes.decided(s) == [
        (PermissionOption.REJECT_ALWAYS, Decider.USER),
        (PermissionOption.REJECT_ALWAYS, Decider.SESSION_RULE),
    ]


@pytest.mark.parametrize(
    ("answer", "expected", "decider"),
    [
        (None, Answer(allowed=False, cancel_turn=True), Decider.USER),
        (
            PermissionUnavailable("the client is gone"),
            Answer(allowed=False, refusal="Permission denied: the client is gone"),
            Decider.CLIENT_ERROR,
        ),
    ],
)
async def test_a_request_without_an_answer_denies_and_is_recorded_as_such(
    answer: PermissionOption | Exception | None, expected: Answer, decider: Decider
) -> None:
    fakes = Fakes(ScriptedAsker(answer))
    s = await fakes.session()
    assert await permit(fakes, s, call("bash", command="make")) == expected
    assert fakes.decided(s) == [(None, decider)]


async def test_nobody_answering_in_time_denies_saying_how_long_it_waited() -> None:
    fakes = Fakes(ScriptedAsker(asyncio.Event()), timeout=0.01)
    s = await fakes.session()
    answer = await permit(fakes, s, call("bash", command="make"))
    assert not answer.allowed and not answer.cancel_turn
    assert "within 0.01 s" in answer.refusal
    assert fakes.decided(s) == [(None, Decider.TIMEOUT)]
    # a client with notices is told so; any other sees the call fail (no agent text)
    [(sid, notice)] = fakes.sink.events
    assert sid == s.id and isinstance(notice, SessionNotice)
    assert notice.severity is NoticeSeverity.WARNING
    assert notice.title.startswith("Permission request timed out")
    assert notice.fallback is None
    assert notice.meta["permissionTimeout"] == {"toolCallId": "toolu_1", "seconds": 0.01}


async def test_a_cancelled_turn_cancels_the_request() -> None:
    fakes = Fakes(ScriptedAsker(asyncio.Event()))
    s = await fakes.session()
    control = TurnControl()
    asking = asyncio.ensure_future(
        fakes.flow().permit(s, control, call("bash", command="ls"), ToolPlan())
    )
    await fakes.asker.asked.wait()
    control.cancelled.set()
    assert await asking == Answer(allowed=False, cancel_turn=True)
    assert fakes.decided(s) == [(None, Decider.USER)]


# --- "Allow once, outside the sandbox" -------------------------------------------------------


def sandboxed(ceiling: SandboxLevel = SandboxLevel.OFF) -> Catalog:
    return replace(CATALOG, sandbox=SandboxRules(ceiling=ceiling))


UNSANDBOXED = PermissionOption.ALLOW_ONCE_UNSANDBOXED


async def test_a_sandboxed_command_may_be_let_out_once_as_its_own_option() -> None:
    fakes = Fakes(asker=ScriptedAsker(UNSANDBOXED), catalog=sandboxed())
    s = await fakes.session()
    answer = await permit(fakes, s, call("bash", command="make install"))
    assert answer == Answer(allowed=True)
    [request] = fakes.asker.requests
    assert request.options[:2] == (PermissionOption.ALLOW_ONCE, UNSANDBOXED)
    assert request.option_name(UNSANDBOXED) == "Allow once, outside the sandbox"
    assert fakes.decided(s) == [(UNSANDBOXED, Decider.USER)]
    assert fakes.waivers.take("toolu_1") is True
    assert fakes.waivers.take("toolu_1") is False  # once


@pytest.mark.parametrize(
    ("catalog", "chosen"),
    [
        (CATALOG, {}),  # no sandbox offered at all
        (sandboxed(SandboxLevel.WORKSPACE_WRITE), {}),  # the ceiling keeps every command in
        (sandboxed(), {"sandbox": "off"}),  # the session runs unconfined already
    ],
    ids=["no-sandbox", "ceiling", "already-off"],
)
async def test_it_is_offered_only_where_it_means_something_the_ceiling_allows(
    catalog: Catalog, chosen: dict[str, str]
) -> None:
    fakes = Fakes(asker=ScriptedAsker(UNSANDBOXED), catalog=catalog)
    s = await fakes.session()
    for option, value in chosen.items():
        s.configure(option, value, at=FixedClock().now())
    answer = await permit(fakes, s, call("bash", command="make install"))
    assert UNSANDBOXED not in fakes.asker.requests[0].options
    # Picked anyway (a client that made it up): an ordinary "allow once", the sandbox stays.
    assert answer == Answer(allowed=True)
    assert fakes.decided(s) == [(PermissionOption.ALLOW_ONCE, Decider.USER)]
    assert fakes.waivers.take("toolu_1") is False


async def test_it_is_never_offered_for_a_file_edit() -> None:
    fakes = Fakes(asker=ScriptedAsker(PermissionOption.ALLOW_ONCE), catalog=sandboxed())
    s = await fakes.session()
    await permit(fakes, s, call("write_file", path="a.py", content="x"))
    assert UNSANDBOXED not in fakes.asker.requests[0].options
