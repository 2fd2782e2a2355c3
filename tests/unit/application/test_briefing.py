"""A turn's briefing through the use cases: what the model is told besides the conversation."""

from dataclasses import replace

from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.events import CommandsAvailable, Notice, UserContentReplayed
from domain.knowledge import Briefing, InstructionFile, InstructionScope, Skill
from domain.message import Role
from domain.permission import PermissionOption
from domain.stop_reason import StopReason
from tests.unit.application.test_subagent import make
from tests.unit.application.test_tools import final, ok, uses
from tests.unit.application.world import World

PROJECT = InstructionFile(
    path="/work/AGENTS.md", scope=InstructionScope.PROJECT, text="Run make check first."
)
NESTED = InstructionFile(
    path="/work/pkg/AGENTS.md", scope=InstructionScope.DIRECTORY, text="No globals in pkg."
)
NOTES = Skill(name="notes", description="Write release notes.", path="/work/.iac-code/n/SKILL.md")


async def opened(world: World) -> str:
    world.knowledge.files = (PROJECT,)
    world.knowledge.skill_list = (NOTES,)
    world.knowledge.bodies = {"notes": "Group the commits. Args: $ARGUMENTS"}
    world.knowledge.nested = {"/work/pkg/a.py": (NESTED,)}
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    await world.announce().execute(state.session_id)
    return state.session_id


async def say(world: World, sid: str, text: str) -> StopReason:
    request = PromptRequest(session_id=sid, content=(TextBlock(text=text),))
    return (await world.prompt().execute(request)).stop_reason


async def test_the_model_is_told_instructions_skills_and_environment(briefed: World) -> None:
    sid = await opened(briefed)
    briefed.tools.tools = {"read_file": ok}
    briefed.llm.scripts = [uses(("read_file", {"path": "pkg/a.py"})), final(), final()]
    await say(briefed, sid, "look")
    first, second = briefed.llm.requests
    assert "Run make check first." in first.system and "notes: Write release notes." in first.system
    assert "Group the commits" not in first.system
    opening = first.messages[-1]
    assert opening.content[0].text.startswith("<environment>")  # type: ignore[union-attr]
    assert "Date: 2026-01-01" in opening.content[0].text  # type: ignore[union-attr]
    assert opening.content[-1] == TextBlock(text="look")
    assert second.messages[0] == opening  # the same in every request of the turn
    assert "load_skill" in [t.name for t in first.tools]
    # A read in pkg/ brought its instructions, once.
    assert "No globals in pkg." in second.messages[-1].tool_results[0].content
    briefed.llm.scripts = [uses(("read_file", {"path": "pkg/a.py"})), final()]
    await say(briefed, sid, "again")
    assert "No globals" not in briefed.llm.requests[-1].messages[-1].tool_results[0].content
    # The user never sees the environment: the stored prompt replays as typed.
    [stored, *_] = [m for m in briefed.uow.sessions.messages[sid] if m.role is Role.USER]
    assert stored.content == (TextBlock(text="look"),) and stored.context is not None


async def test_a_skill_and_init_are_commands_that_expand_into_the_prompt(briefed: World) -> None:
    sid = await opened(briefed)
    commands = [c.name for c in briefed.sink.of_type(CommandsAvailable)[-1].commands]
    assert {"init", "notes"} <= set(commands)
    briefed.llm.scripts = [final(), final()]
    await say(briefed, sid, "/notes v2")
    await say(briefed, sid, "/init")
    skill, init = (r.messages[-1].content[-1] for r in briefed.llm.requests)
    assert "Group the commits. Args: v2" in skill.text  # type: ignore[union-attr]
    assert "`/work/AGENTS.md`" in init.text and "edit_file" in init.text  # type: ignore[union-attr]
    await briefed.close().execute(sid)
    briefed.sink.events.clear()
    await briefed.load().execute(LoadSessionRequest(session_id=sid, cwd="/work"))
    replayed = [e.block for e in briefed.sink.of_type(UserContentReplayed)]
    assert replayed == [TextBlock(text="/notes v2"), TextBlock(text="/init")]


async def test_a_skill_gone_meanwhile_is_told_and_ends_the_turn(briefed: World) -> None:
    sid = await opened(briefed)
    briefed.knowledge.bodies.clear()
    assert await say(briefed, sid, "/notes") is StopReason.END_TURN
    assert briefed.llm.requests == []
    assert briefed.sink.of_type(Notice)[-1].text.startswith("/notes failed:")


async def test_load_skill_runs_without_asking(briefed: World) -> None:
    sid = await opened(briefed)
    briefed.llm.scripts = [uses(("load_skill", {"name": "notes"})), final()]
    await say(briefed, sid, "notes please")
    assert briefed.asker.requests == []
    result = briefed.llm.requests[1].messages[-1].tool_results[0]
    assert "Group the commits" in result.content and not result.is_error


async def test_the_sub_agent_is_told_the_same(briefed: World) -> None:
    sid = await opened(briefed)
    briefed.tools = make(  # type: ignore[assignment]
        briefed.llm, briefed.tools, max_requests=3, uow=briefed.uow, ids=briefed.ids
    )
    briefed.asker.answers = [PermissionOption.ALLOW_ONCE]
    briefed.llm.scripts = [uses(("agent", {"prompt": "research"})), final("found"), final()]
    await say(briefed, sid, "go")
    sub = briefed.llm.requests[1]
    assert "Run make check first." in sub.system and "research sub-agent" in sub.system.lower()
    assert sub.messages[0].content[0].text.startswith("<environment>")  # type: ignore[union-attr]


def held(world: World, sid: str) -> Briefing:
    active = world.registry.find(sid)
    assert active is not None
    return active.briefing


async def test_opening_a_session_reads_no_environment_and_a_turn_drops_it(briefed: World) -> None:
    sid = await opened(briefed)
    assert briefed.knowledge.environments == []  # no git, no listing: only what opening shows
    assert held(briefed, sid).instructions == (PROJECT,) and held(briefed, sid).environment is None
    briefed.llm.scripts = [final(), final()]
    await say(briefed, sid, "one")
    assert briefed.knowledge.environments == ["/work"]
    assert held(briefed, sid).environment is None  # idle: the next turn reads it afresh
    assert held(briefed, sid).instructions == (PROJECT,)  # still counted and offered
    await say(briefed, sid, "two")
    assert briefed.knowledge.environments == ["/work", "/work"]
    told = briefed.llm.requests[-1].messages[-1].content[0]
    assert told.text.startswith("<environment>")  # type: ignore[union-attr]


async def test_sessions_of_one_project_share_its_instructions_until_they_change(
    briefed: World,
) -> None:
    first = await opened(briefed)
    briefed.knowledge.files = (replace(PROJECT),)  # read again: equal, another copy
    briefed.knowledge.skill_list = (replace(NOTES),)
    second = await opened_again(briefed)
    assert held(briefed, second).instructions is held(briefed, first).instructions
    assert held(briefed, second).skills is held(briefed, first).skills
    changed = replace(PROJECT, text="Run make lint first.")
    briefed.knowledge.files = (changed,)
    briefed.llm.scripts = [final(), final()]
    await say(briefed, second, "go")
    assert "Run make lint first." in briefed.llm.requests[-1].system
    assert held(briefed, second).instructions == (changed,)
    assert held(briefed, first).instructions == (PROJECT,)  # read again at its next turn
    await say(briefed, first, "go")
    assert "Run make lint first." in briefed.llm.requests[-1].system
    assert held(briefed, first).instructions is held(briefed, second).instructions


async def opened_again(world: World) -> str:
    """Another session in the project, the knowledge left as it is."""
    state = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    await world.announce().execute(state.session_id)
    return state.session_id


async def test_reopening_a_session_mid_turn_keeps_the_turns_environment(briefed: World) -> None:
    sid = await opened(briefed)
    active = briefed.registry.find(sid)
    assert active is not None
    control = active.begin_turn()
    briefer = briefed.briefer()
    assert briefer is not None
    told = (await briefer.gather(active)).environment
    assert told is not None
    await briefer.gather(active, environment=False)  # a client reopening it meanwhile
    assert active.briefing.environment is told
    active.end_turn(control)
    assert active.briefing.environment is None
