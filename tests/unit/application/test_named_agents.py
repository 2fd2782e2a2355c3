"""Named sub-agents: offered by the `agent` tool (unchanged without any), run with their own
system prompt, model and tools, announced with their name; listed by /agents."""

from collections.abc import Mapping
from dataclasses import replace

from application.commands.agents import AgentsCommand
from application.knowledge.named_agents import NamedAgentTools, agent_tool
from application.ports.llm import ModelResponse
from application.ports.tools import ChildCall, ToolContext, ToolPlan, ToolResult
from application.runtime.command_registry import CommandInput
from application.runtime.turn_control import TurnControl
from application.subagents.subagent import AGENT_TOOL, SubAgentTools
from domain.content import ToolUseBlock
from domain.events import AgentEvent, SubagentChanged, SubagentState
from domain.ids import MessageId
from domain.knowledge import AgentProfile, Briefing
from domain.stop_reason import ModelStop
from domain.turn import Turn
from domain.usage import Usage
from tests.factories import T0, SessionFactory
from tests.fakes.knowledge import FakeKnowledge
from tests.fakes.turn import FakeTools, ScriptedLLM
from tests.unit.application.test_subagent import answer, make

TESTER = AgentProfile(
    name="tester",
    description="Writes the tests",
    tools=("read_file", "write_file"),
    prompt="You write tests.",
    path="/p/.iac-code/agents/tester.md",
    model="m-small",
)
REVIEWER = AgentProfile(
    name="reviewer", description="Reviews", tools=("grep",), prompt="Review.", path="/r.md"
)


async def ok(arguments: Mapping[str, object]) -> ToolResult:
    return ToolResult(text=f"did {arguments.get('path')}")


def asks(name: str, arguments: dict[str, object]) -> list[ModelResponse]:
    use = ToolUseBlock(id="s0", name=name, input=arguments)
    return [ModelResponse(content=(use,), stop=ModelStop.TOOL_USE, usage=Usage())]


def sub_agents(llm: ScriptedLLM, inner: FakeTools) -> SubAgentTools:
    return make(llm, inner)


async def nothing(_: object) -> None:
    pass


def context(events: list[AgentEvent], *agents: AgentProfile) -> ToolContext:
    async def report(event: AgentEvent) -> None:
        events.append(event)

    return ToolContext(
        cwd="/work",
        model="m-parent",
        session_id="parent",
        call_id="toolu_1",
        report=report,
        briefing=Briefing(agents=agents),
    )


def test_without_named_agents_the_tool_is_offered_as_before() -> None:
    assert agent_tool(AGENT_TOOL, ()) is AGENT_TOOL
    tools = NamedAgentTools(sub_agents(ScriptedLLM(), FakeTools(read_file=ok)), ())
    assert tools.definitions()[-1] is AGENT_TOOL


def test_named_agents_are_offered_in_the_tools_description_and_input() -> None:
    tools = NamedAgentTools(sub_agents(ScriptedLLM(), FakeTools(read_file=ok)), (TESTER,))
    read_file, offered = tools.definitions()
    assert read_file.name == "read_file"
    assert offered.description.startswith(AGENT_TOOL.description)
    assert "- tester: Writes the tests (tools: read_file, write_file)" in offered.description
    schema = offered.input_schema
    assert schema["required"] == ["prompt"]  # the agent stays optional
    assert schema["properties"]["agent"]["enum"] == ["researcher", "tester"]  # type: ignore[index]


async def test_a_named_agent_runs_with_its_prompt_model_and_tools_announced_by_name() -> None:
    llm = ScriptedLLM(asks("read_file", {"path": "a.py"}), answer("tests written"))
    inner = FakeTools(read_file=ok, write_file=ok, grep=ok, bash=ok)
    events: list[AgentEvent] = []
    arguments = {"prompt": "test a.py", "agent": "tester"}
    tools = sub_agents(llm, inner)
    ctx = context(events, TESTER, REVIEWER)
    assert (await tools.plan("agent", arguments, ctx)).problem is None
    result = await tools.run("agent", arguments, ctx, nothing)

    assert result.text == "tests written"
    request = llm.requests[0]
    assert request.system.startswith("You write tests.")
    assert request.model == "m-small"
    assert [t.name for t in request.tools] == ["read_file", "write_file"]
    assert inner.ran == [("read_file", {"path": "a.py"})]
    announced = [e for e in events if isinstance(e, SubagentChanged)]
    assert announced[0].agent == "tester"
    assert result.raw_output["subagent"]["agent"] == "tester"  # type: ignore[index]


async def test_the_researcher_stays_the_default_and_can_be_named() -> None:
    for arguments in ({"prompt": "p"}, {"prompt": "p", "agent": "researcher"}):
        llm = ScriptedLLM(answer("found"))
        events: list[AgentEvent] = []
        await sub_agents(llm, FakeTools(read_file=ok, bash=ok)).run(
            "agent", arguments, context(events, TESTER), nothing
        )
        assert [t.name for t in llm.requests[0].tools] == ["read_file"]
        assert llm.requests[0].model == "m-parent"
        assert "research sub-agent" in llm.requests[0].system
        assert isinstance(events[0], SubagentChanged) and events[0].agent == "researcher"


async def test_an_unknown_agent_is_a_problem_naming_the_agents() -> None:
    tools = sub_agents(ScriptedLLM(), FakeTools())
    plan = await tools.plan("agent", {"prompt": "p", "agent": "nope"}, context([], TESTER))
    assert plan.problem == "There is no sub-agent named 'nope'; the agents are: researcher, tester."


async def test_a_named_agents_write_is_refused_when_nobody_can_be_asked() -> None:
    llm = ScriptedLLM(asks("write_file", {"path": "t.py"}), answer("could not"))
    inner = FakeTools(write_file=ok)
    ctx = context([], TESTER)
    await sub_agents(llm, inner).run("agent", {"prompt": "p", "agent": "tester"}, ctx, nothing)
    [result] = llm.requests[1].messages[-1].tool_results
    assert result.content == "Refused to the sub-agent: it needs the user's permission."
    assert inner.ran == []


async def test_slash_agents_lists_the_researcher_and_the_named_agents() -> None:
    knowledge = FakeKnowledge(agent_list=(REVIEWER, TESTER))
    command = CommandInput(
        session=SessionFactory(cwd="/p"),
        control=TurnControl(),
        turn=Turn(started_at=T0, max_requests=1),
        argument="",
        reply_id=MessageId("msg_1"),
        offered=(),
    )
    text = await AgentsCommand(knowledge=knowledge).run(command)
    lines = text.splitlines()
    assert lines[1].startswith("- `researcher` (built in, the default)")
    assert lines[2] == "- `reviewer`: Reviews (tools: grep; /r.md)"
    assert lines[3] == (
        "- `tester`: Writes the tests (tools: read_file, write_file, model m-small; "
        "/p/.iac-code/agents/tester.md)"
    )
    empty = await AgentsCommand(knowledge=FakeKnowledge()).run(command)
    assert "Define your own in `.iac-code/agents/<name>.md`" in empty


async def test_a_childs_write_is_asked_through_the_parents_flow_naming_the_child() -> None:
    llm = ScriptedLLM(
        asks("write_file", {"path": "t.py"}), asks("write_file", {"path": "u.py"}), answer("ok")
    )
    inner = FakeTools(write_file=ok)
    events: list[AgentEvent] = []
    asked: list[ChildCall] = []
    states_when_asked: list[SubagentState] = []

    async def permit(child: ChildCall) -> str | None:
        asked.append(child)
        states_when_asked.append([e for e in events if isinstance(e, SubagentChanged)][-1].state)
        return None if child.call.arguments["path"] == "t.py" else "Permission denied."

    ctx = replace(context(events, TESTER), permit=permit)
    await sub_agents(llm, inner).run("agent", {"prompt": "p", "agent": "tester"}, ctx, nothing)

    child = events[0].child_id  # type: ignore[union-attr]
    assert [(c.call.name, c.child_id, c.agent) for c in asked] == [
        ("write_file", child, "tester"),
        ("write_file", child, "tester"),
    ]
    assert states_when_asked == [SubagentState.WAITING, SubagentState.WAITING]
    assert inner.ran == [("write_file", {"path": "t.py"})]  # allowed; the second refused
    [refused] = llm.requests[2].messages[-1].tool_results
    assert refused.is_error and refused.content == "Permission denied."
    states = [e.state for e in events if isinstance(e, SubagentChanged)]
    assert states == [
        SubagentState.RUNNING,
        SubagentState.WAITING,
        SubagentState.RUNNING,
        SubagentState.WAITING,
        SubagentState.RUNNING,
        SubagentState.DONE,
    ]


async def test_the_researcher_never_asks_a_read_outside_cwd_is_refused_as_before() -> None:
    llm = ScriptedLLM(asks("read_file", {"path": "/etc/x"}), answer("could not"))
    inner = FakeTools(read_file=ok)
    inner.plans["read_file"] = ToolPlan(outside_cwd=True)
    asked: list[ChildCall] = []

    async def permit(child: ChildCall) -> str | None:
        asked.append(child)
        return None

    ctx = replace(context([], TESTER), permit=permit)
    await sub_agents(llm, inner).run("agent", {"prompt": "p"}, ctx, nothing)
    [result] = llm.requests[1].messages[-1].tool_results
    assert result.is_error and "outside the working directory" in str(result.content)
    assert asked == [] and inner.ran == []
