"""A sub-agent's call decided by its parent session's permission flow: the same mode, the
same remembered project rules, the same clients; the request names the child; a
cancelled request refuses the child's call (its parent's turn decides for itself)."""

from application.ports.tools import ChildCall, ToolPlan
from application.runtime.turn_control import TurnControl
from application.tools.permissions import DENIED, PLANNING
from domain.permission import Decider, PermissionOption
from tests.fakes.turn import ScriptedAsker
from tests.unit.application.test_permission_flow import Fakes, call


def child(name: str, mode: str | None = None, **arguments: object) -> ChildCall:
    return ChildCall(
        call=call(name, **arguments),
        plan=ToolPlan(),
        child_id="child_1",
        agent="tester",
        mode=mode,
    )


async def test_a_childs_write_asks_the_parents_clients_naming_the_child() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.ALLOW_ONCE, PermissionOption.REJECT_ONCE))
    s = await fakes.session()
    flow = fakes.flow()
    assert await flow.permit_child(s, TurnControl(), child("write_file", path="a")) is None
    refusal = await flow.permit_child(s, TurnControl(), child("write_file", path="b"))
    assert refusal == DENIED
    first, _ = fakes.asker.requests
    assert (first.child_session_id, first.agent, first.tool_name) == (
        "child_1",
        "tester",
        "write_file",
    )
    assert fakes.decided(s) == [
        (PermissionOption.ALLOW_ONCE, Decider.USER),
        (PermissionOption.REJECT_ONCE, Decider.USER),
    ]


async def test_plan_mode_refuses_a_childs_write_without_asking() -> None:
    fakes = Fakes()
    s = await fakes.session(mode="plan")
    refusal = await fakes.flow().permit_child(s, TurnControl(), child("bash", command="ls"))
    assert refusal == PLANNING
    assert fakes.asker.requests == []


async def test_a_rule_remembered_for_the_project_lets_a_childs_call_run_unasked() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.ALLOW_ALWAYS))
    s = await fakes.session()
    flow = fakes.flow()
    assert await flow.permit_child(s, TurnControl(), child("bash", command="make test")) is None
    assert await flow.permit_child(s, TurnControl(), child("bash", command="make test")) is None
    assert len(fakes.asker.requests) == 1  # the second was the project's rule's
    assert fakes.decided(s)[-1] == (PermissionOption.ALLOW_ONCE, Decider.PROJECT_RULE)


async def test_a_request_the_user_cancelled_refuses_only_the_childs_call() -> None:
    fakes = Fakes(ScriptedAsker(None))
    s = await fakes.session()
    refusal = await fakes.flow().permit_child(s, TurnControl(), child("write_file", path="a"))
    assert refusal == DENIED


async def test_an_agents_own_mode_narrows_its_parents_and_never_widens_it() -> None:
    fakes = Fakes(ScriptedAsker(PermissionOption.ALLOW_ONCE, PermissionOption.ALLOW_ONCE))
    relaxed = await fakes.session(mode="accept_edits")
    flow = fakes.flow()
    # An agent whose file says plan may not write, though its parent accepts edits.
    planning = child("write_file", mode="plan", path="a")
    assert await flow.permit_child(relaxed, TurnControl(), planning) == PLANNING
    # One that says default asks where its parent would have let the edit run.
    assert await flow.permit_child(relaxed, TurnControl(), child("write_file", "default")) is None
    assert len(fakes.asker.requests) == 1
    # One that says bypass still asks under a default parent.
    strict = await fakes.session()
    assert await flow.permit_child(strict, TurnControl(), child("bash", "bypass")) is None
    assert len(fakes.asker.requests) == 2
