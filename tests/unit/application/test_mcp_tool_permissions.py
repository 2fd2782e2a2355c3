"""MCP tools under the session's modes and remembered answers."""

from application.dto import SessionOpening
from application.ports.mcp import McpTool
from application.ports.tools import ToolDefinition
from application.sessions.new_session import NewSessionRequest
from application.sessions.settings import SetModeRequest
from domain.events import Notice
from domain.mcp import McpStatus
from domain.modes import ModeId
from domain.permission import PermissionOption
from domain.stop_reason import StopReason
from tests.fakes.mcp import FakeMcpServers
from tests.unit.application.test_session_servers import DOCS, REVIEW, SEARCH, opened, say
from tests.unit.application.test_tools import final, tool_results, uses
from tests.unit.application.world import World

DELETE = McpTool(
    definition=ToolDefinition(name="mcp__docs__delete", description="Delete", input_schema={}),
    server="docs",
    title="Delete a page",
)


def two_tools(servers: FakeMcpServers) -> None:
    servers.tools_offered = (SEARCH, DELETE)
    servers.prompts_offered = (REVIEW,)
    servers.prompt_texts = {"mcp__docs__review": "Please review."}


async def connected(world: World, cwd: str = "/work") -> tuple[str, FakeMcpServers]:
    world.connector.configure = two_tools
    state = await world.new_session().execute(
        NewSessionRequest(cwd=cwd, opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    await world.announce().execute(state.session_id)
    servers = world.connector.opened[-1]
    await servers.settle("docs", McpStatus.CONNECTED)
    return state.session_id, servers


async def in_mode(world: World, sid: str, mode: ModeId) -> None:
    await world.set_mode().execute(SetModeRequest(session_id=sid, mode_id=mode.value))


async def test_plan_mode_refuses_an_mcp_tool_without_asking(world: World) -> None:
    sid, servers = await connected(world)
    await in_mode(world, sid, ModeId.PLAN)
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "x"})), final()]
    await say(world, sid, "go")
    assert servers.calls == [] and world.asker.requests == []
    [result] = tool_results(world, sid)
    assert result.is_error and "plan mode" in result.content


async def test_bypass_runs_an_mcp_tool_unasked(world: World) -> None:
    sid, servers = await connected(world)
    await in_mode(world, sid, ModeId.BYPASS)
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "x"})), final()]
    await say(world, sid, "go")
    assert servers.calls == [("mcp__docs__search", {"q": "x"})]
    assert world.asker.requests == []


async def test_accept_edits_still_asks_for_an_mcp_tool(world: World) -> None:
    sid, servers = await connected(world)
    await in_mode(world, sid, ModeId.ACCEPT_EDITS)
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "x"})), final()]
    await say(world, sid, "go")
    assert len(world.asker.requests) == 1 and servers.calls == []


async def test_always_allow_is_remembered_for_that_tool_in_that_project_only(
    world: World,
) -> None:
    sid, _ = await connected(world)
    world.asker.answers = [PermissionOption.ALLOW_ALWAYS]
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "a"})), final()]
    await say(world, sid, "go")
    [rule] = world.uow.rules.rules
    assert (rule.tool_name, rule.cwd, rule.command) == ("mcp__docs__search", "/work", None)

    # Another session of the project: the same tool runs unasked, whatever its arguments ...
    other, servers = await connected(world)
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "b"})), final()]
    await say(world, other, "go")
    assert servers.calls == [("mcp__docs__search", {"q": "b"})]
    assert len(world.asker.requests) == 1
    # ... another tool of the same server still asks ...
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    world.llm.scripts = [uses(("mcp__docs__delete", {})), final()]
    await say(world, other, "go")
    assert len(world.asker.requests) == 2
    # ... and so does the same tool in another project.
    elsewhere, _ = await connected(world, cwd="/elsewhere")
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "c"})), final()]
    await say(world, elsewhere, "go")
    assert len(world.asker.requests) == 3


async def test_reject_always_refuses_the_tool_for_the_rest_of_the_session(world: World) -> None:
    sid, servers = await connected(world)
    world.asker.answers = [PermissionOption.REJECT_ALWAYS]
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "a"})), final()]
    await say(world, sid, "go")
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "b"})), final()]
    await say(world, sid, "again")
    assert servers.calls == [] and len(world.asker.requests) == 1
    # only that tool: the server's other one still asks
    world.asker.answers = [PermissionOption.ALLOW_ONCE]
    world.llm.scripts = [uses(("mcp__docs__delete", {})), final()]
    await say(world, sid, "delete")
    assert servers.calls == [("mcp__docs__delete", {})]


async def test_a_tool_of_a_server_that_failed_is_neither_offered_nor_run(world: World) -> None:
    world.connector.configure = two_tools
    sid, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.FAILED, "connection refused")
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "x"})), final()]
    assert await say(world, sid, "go") is StopReason.END_TURN
    assert "mcp__docs__search" not in [t.name for t in world.llm.requests[0].tools]
    assert servers.calls == [] and world.asker.requests == []
    [result] = tool_results(world, sid)
    assert result.is_error and "not connected" in result.content


async def test_an_escaped_prompt_command_reaches_the_model_as_text(world: World) -> None:
    sid, servers = await connected(world)
    world.llm.scripts = [final()]
    await say(world, sid, "//mcp__docs__review app.py")
    assert servers.prompt_calls == []
    assert world.llm.requests[0].messages[-1].visible_text() == "/mcp__docs__review app.py"


async def test_a_prompt_command_of_a_closed_sessions_server_is_not_offered_elsewhere(
    world: World,
) -> None:
    await connected(world)
    other = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    world.llm.scripts = [final()]
    await say(world, other.session_id, "/mcp__docs__review app.py")
    # not a command in this session: the text goes to the model as typed
    assert world.llm.requests[0].messages[-1].visible_text() == "/mcp__docs__review app.py"
    assert not any("failed" in e.text for e in world.sink.of_type(Notice))
