"""An open session's MCP servers, through the use cases, with a scripted connector."""

import asyncio

import pytest

from application.dto import SessionOpening
from application.mcp.session_servers import prompt_arguments
from application.ports.mcp import McpPrompt, McpPromptArgument, McpTool
from application.ports.tools import ToolDefinition, ToolResult
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from application.turn.prompt import PromptRequest
from domain.content import TextBlock
from domain.events import (
    CommandsAvailable,
    McpServersChanged,
    Notice,
    NoticeSeverity,
    SessionNotice,
    ToolCallStarted,
    UserContentReplayed,
)
from domain.mcp import McpServerSpec, McpStatus, McpTransport
from domain.message import Role
from domain.permission import PermissionOption
from domain.stop_reason import StopReason
from domain.tool_call import ToolKind
from tests.fakes.mcp import FakeMcpConnector, FakeMcpServers
from tests.unit.application.test_tools import final, uses
from tests.unit.application.world import World

DOCS = McpServerSpec(
    name="docs", transport=McpTransport.STDIO, command="docs-server", env={"TOKEN": "s3cret"}
)
BROKEN = McpServerSpec(name="broken", transport=McpTransport.HTTP, url="http://127.0.0.1:1/mcp")
SEARCH = McpTool(
    definition=ToolDefinition(
        name="mcp__docs__search",
        description="Search the docs",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
    ),
    server="docs",
    title="Search the docs",
)
REVIEW = McpPrompt(
    name="mcp__docs__review",
    server="docs",
    description="Review a file",
    arguments=(McpPromptArgument(name="file", required=True),),
)


def offering(servers: FakeMcpServers) -> None:
    servers.tools_offered = (SEARCH,)
    servers.prompts_offered = (REVIEW,)
    servers.prompt_texts = {"mcp__docs__review": "Please review app.py carefully."}


async def opened(world: World, *specs: McpServerSpec) -> tuple[str, FakeMcpServers]:
    world.connector.configure = offering
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(mcp_servers=specs))
    )
    await world.announce().execute(state.session_id)  # what follows the session/new answer
    return state.session_id, world.connector.opened[-1]


async def say(world: World, sid: str, text: str) -> StopReason:
    result = await world.prompt().execute(
        PromptRequest(session_id=sid, content=(TextBlock(text=text),))
    )
    return result.stop_reason


async def test_servers_connect_after_the_answer_and_are_stored_without_secrets(
    world: World,
) -> None:
    sid, servers = await opened(world, DOCS)
    assert servers.specs == (DOCS,)  # the connector got the secret, to start the server
    stored = world.uow.sessions.stored[sid].settings["mcp_servers"]
    assert stored == (
        {"name": "docs", "type": "stdio", "command": "docs-server", "args": [], "env": ["TOKEN"]},
    )
    assert "s3cret" not in repr(stored)
    [reported] = world.sink.of_type(McpServersChanged)
    assert [(s.name, s.status) for s in reported.servers] == [("docs", McpStatus.CONNECTING)]


async def test_a_failed_server_is_told_once_and_the_good_one_serves(world: World) -> None:
    _, servers = await opened(world, DOCS, BROKEN)
    await servers.settle("broken", McpStatus.FAILED, "connection refused")
    await servers.settle("docs", McpStatus.CONNECTED)
    await servers.settle("broken", McpStatus.FAILED, "connection refused")  # again: not retold
    told = [e for e in world.sink.of_type(SessionNotice) if isinstance(e, SessionNotice)]
    # as agent text (a client without notices) once; as an error notice each time
    notices = [e.fallback.text for e in told if e.fallback is not None]
    assert notices == ["MCP server 'broken' failed: connection refused\n"]
    assert [(e.severity, e.title, e.description) for e in told] == [
        (NoticeSeverity.ERROR, "MCP server 'broken' failed", "connection refused")
    ] * 2
    assert told[0].meta == {"mcpServer": {"name": "broken", "status": "failed"}}
    last = world.sink.of_type(McpServersChanged)[-1].servers
    assert [(s.name, s.status, s.tools) for s in last] == [
        ("docs", McpStatus.CONNECTED, 1),
        ("broken", McpStatus.FAILED, 0),
    ]
    # the connected server's prompt is now a slash command of this session
    commands = world.sink.of_type(CommandsAvailable)[-1].commands
    assert [c.name for c in commands][-1] == "mcp__docs__review"
    assert commands[-1].hint == "file"


async def test_the_model_is_offered_the_tools_and_a_call_asks_first(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    servers.results["mcp__docs__search"] = ToolResult(text="3 hits")
    world.asker.answers = [PermissionOption.ALLOW_ONCE]
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "auth"})), final()]
    assert await say(world, sid, "find auth docs") is StopReason.END_TURN
    assert "mcp__docs__search" in [t.name for t in world.llm.requests[0].tools]
    assert servers.calls == [("mcp__docs__search", {"q": "auth"})]
    [asked] = world.asker.requests
    assert asked.tool_name == "mcp__docs__search"
    assert PermissionOption.ALLOW_ALWAYS in asked.options  # remembered per server tool
    [started] = world.sink.of_type(ToolCallStarted)
    assert (started.title, started.kind) == ("Search the docs", ToolKind.OTHER)
    assert world.llm.requests[1].messages[-1].tool_results[0].content == "3 hits"


async def test_a_rejected_call_never_reaches_the_server(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    world.asker.answers = [PermissionOption.REJECT_ONCE]
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "x"})), final()]
    await say(world, sid, "go")
    assert servers.calls == []


async def test_one_sessions_tools_are_not_offered_in_another(world: World) -> None:
    _, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    world.connector.configure = lambda s: None
    other = await world.new_session().execute(NewSessionRequest(cwd="/work"))
    world.llm.scripts = [uses(("mcp__docs__search", {"q": "x"})), final()]
    await say(world, other.session_id, "go")
    assert "mcp__docs__search" not in [t.name for t in world.llm.requests[0].tools]
    assert servers.calls == []  # the call failed in the other session, without asking
    assert world.asker.requests == []


async def test_the_first_prompt_waits_for_servers_still_connecting(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    world.llm.scripts = [final()]
    turn = asyncio.ensure_future(say(world, sid, "hello"))
    await asyncio.sleep(0)
    assert not world.llm.requests
    await servers.settle("docs", McpStatus.CONNECTED)
    assert await turn is StopReason.END_TURN
    assert "mcp__docs__search" in [t.name for t in world.llm.requests[0].tools]


async def test_an_mcp_prompt_command_sends_its_text_to_the_model(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    world.llm.scripts = [final()]
    await say(world, sid, "/mcp__docs__review app.py")
    assert servers.prompt_calls == [("mcp__docs__review", {"file": "app.py"})]
    sent = world.llm.requests[0].messages[-1]
    assert sent.visible_text() == "Please review app.py carefully."
    # Stored with the user's own words, which a load replays.
    [stored] = [m for m in world.uow.sessions.messages[sid] if m.role is Role.USER]
    assert stored.visible_text() == "Please review app.py carefully."
    assert stored.typed == "/mcp__docs__review app.py"
    await world.close().execute(sid)
    world.sink.events.clear()
    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/work"))
    replayed = [e.block for e in world.sink.of_type(UserContentReplayed)]
    assert replayed == [TextBlock(text="/mcp__docs__review app.py")]


async def test_an_mcp_prompt_that_fails_is_told_and_ends_the_turn(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    servers.prompt_texts.clear()
    assert await say(world, sid, "/mcp__docs__review") is StopReason.END_TURN
    assert world.llm.requests == []
    assert world.sink.of_type(Notice)[-1].text.startswith("/mcp__docs__review failed:")


async def test_reopening_with_the_same_servers_keeps_them_and_other_ones_replace_them(
    world: World,
) -> None:
    sid, first = await opened(world, DOCS)
    await world.close().execute(sid)
    assert first.closed  # closing the session stops its servers
    await world.load().execute(
        LoadSessionRequest(session_id=sid, cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    await world.announce().execute(sid)
    second = world.connector.opened[-1]
    assert second is not first
    await world.load().execute(
        LoadSessionRequest(session_id=sid, cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    await world.announce().execute(sid)
    assert world.connector.opened[-1] is second and not second.closed
    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/work"))
    await world.announce().execute(sid)
    assert second.closed
    assert world.uow.sessions.stored[sid].settings["mcp_servers"] == ()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("app.py", {"file": "app.py", "focus": ""}),
        ("app.py security and speed", {"file": "app.py", "focus": "security and speed"}),
        ("focus=tests app.py", {"file": "app.py", "focus": "tests"}),
        ('"my file.py" x', {"file": "my file.py", "focus": "x"}),
        ("", {}),
        ('unbalanced "quote', {"file": "unbalanced", "focus": '"quote'}),
    ],
)
def test_prompt_arguments_from_what_the_user_typed(typed: str, expected: dict) -> None:
    prompt = McpPrompt(
        name="mcp__s__review",
        server="s",
        description="",
        arguments=(McpPromptArgument(name="file", required=True), McpPromptArgument(name="focus")),
    )
    got = prompt_arguments(prompt, typed)
    assert {k: v for k, v in got.items()} == {k: v for k, v in expected.items() if v}


async def test_help_lists_the_sessions_mcp_prompts(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    await say(world, sid, "/help")
    assert "/mcp__docs__review" in world.sink.of_type(Notice)[-1].text


async def test_a_prompt_racing_a_slow_connector_still_waits_for_the_servers(
    world: World,
) -> None:
    loaded = asyncio.Event()
    made = world.connector

    async def slow_connector() -> FakeMcpConnector:
        await loaded.wait()  # the MCP SDK still importing in its thread
        return made

    world.connector.configure = offering
    world.connector_now = slow_connector  # type: ignore[method-assign]
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    sid = state.session_id
    announcing = asyncio.ensure_future(world.announce().execute(sid))
    world.llm.scripts = [final()]
    turn = asyncio.ensure_future(say(world, sid, "hello"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not world.llm.requests and not made.opened
    loaded.set()
    await until_opened(made)
    assert len(made.opened) == 1  # opened once, by whichever call took it
    await made.opened[0].settle("docs", McpStatus.CONNECTED)
    await announcing
    assert await turn is StopReason.END_TURN
    assert "mcp__docs__search" in [t.name for t in world.llm.requests[0].tools]


async def until_opened(connector: FakeMcpConnector) -> None:
    while not connector.opened:
        await asyncio.sleep(0)


async def test_a_server_that_comes_back_is_an_info_notice_for_clients_with_notices(
    world: World,
) -> None:
    _, servers = await opened(world, DOCS)
    await servers.settle("docs", McpStatus.CONNECTED)
    await servers.settle("docs", McpStatus.FAILED, "the server exited with status 7")
    await servers.settle("docs", McpStatus.CONNECTING)
    await servers.settle("docs", McpStatus.CONNECTED)  # started again
    await servers.settle("docs", McpStatus.CONNECTED)  # nothing new: not told again

    told = [e for e in world.sink.of_type(SessionNotice) if isinstance(e, SessionNotice)]
    assert [(e.severity, e.title) for e in told] == [
        (NoticeSeverity.ERROR, "MCP server 'docs' failed"),
        (NoticeSeverity.INFO, "MCP server 'docs' is running again"),
    ]
    assert told[1].fallback is None  # nothing was said of it before notices
    assert told[1].meta == {"mcpServer": {"name": "docs", "status": "connected"}}
