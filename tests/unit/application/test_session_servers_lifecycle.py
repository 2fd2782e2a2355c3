"""An open session's MCP servers across their life: replaced, closed, raced by other calls."""

import asyncio

from application.dto import SessionOpening
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from domain.events import McpServersChanged, SessionNotice
from domain.mcp import McpServerSpec, McpStatus, McpTransport
from domain.stop_reason import StopReason
from tests.fakes.mcp import FakeMcpConnector
from tests.unit.application.test_session_servers import DOCS, offering, opened, say, until_opened
from tests.unit.application.test_tools import final
from tests.unit.application.world import World

DB = McpServerSpec(name="db", transport=McpTransport.STDIO, command="db-server", env={"PW": "pw1"})
DB_AGAIN = McpServerSpec(
    name="db", transport=McpTransport.STDIO, command="db-server", env={"PW": "pw2"}
)


async def reopen(world: World, sid: str, *specs: McpServerSpec) -> None:
    """session/load with `specs`, and what follows its answer."""
    await world.load().execute(
        LoadSessionRequest(session_id=sid, cwd="/work", opening=SessionOpening(mcp_servers=specs))
    )
    await world.announce().execute(sid)


def notices(world: World) -> list[str]:
    """What a client without notices reads of the servers' failures."""
    told = [e for e in world.sink.of_type(SessionNotice) if isinstance(e, SessionNotice)]
    return [e.fallback.text for e in told if e.fallback is not None]


async def test_a_replaced_servers_late_failure_is_not_told_as_the_sessions(world: World) -> None:
    sid, old = await opened(world, DB)
    await reopen(world, sid, DOCS)
    assert old.closed
    reports = len(world.sink.of_type(McpServersChanged))
    await old.settle("db", McpStatus.FAILED, "stopped while connecting")  # as its stop ends
    assert notices(world) == []  # 'db' is no longer a server of this session
    assert len(world.sink.of_type(McpServersChanged)) == reports


async def test_a_server_reopened_under_the_same_name_still_has_its_failure_told(
    world: World,
) -> None:
    sid, old = await opened(world, DB)
    await reopen(world, sid, DB_AGAIN)  # another secret: the server is started again
    new = world.connector.opened[-1]
    assert new is not old and old.closed
    await old.settle("db", McpStatus.FAILED, "stopped while connecting")
    await new.settle("db", McpStatus.FAILED, "the server exited with status 1")
    assert notices(world) == ["MCP server 'db' failed: the server exited with status 1\n"]


async def test_no_state_is_reported_after_the_session_closed(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    before = len(world.sink.events)
    await world.close().execute(sid)
    assert servers.closed
    await servers.settle("docs", McpStatus.FAILED, "stopped")
    assert len(world.sink.events) == before


async def test_closing_while_the_connector_loads_opens_nothing(world: World) -> None:
    loaded = asyncio.Event()
    made = world.connector

    async def slow_connector() -> FakeMcpConnector:
        await loaded.wait()
        return made

    world.connector_now = slow_connector  # type: ignore[method-assign]
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    announcing = asyncio.ensure_future(world.announce().execute(state.session_id))
    await asyncio.sleep(0)
    await world.close().execute(state.session_id)
    loaded.set()
    await announcing
    assert made.opened == []  # nothing left running behind a closed session


async def test_a_load_with_other_servers_while_the_connector_loads_opens_only_those(
    world: World,
) -> None:
    loaded = asyncio.Event()
    made = world.connector

    async def slow_connector() -> FakeMcpConnector:
        await loaded.wait()
        return made

    world.connector_now = slow_connector  # type: ignore[method-assign]
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    sid = state.session_id
    first = asyncio.ensure_future(world.announce().execute(sid))
    await asyncio.sleep(0)
    await world.load().execute(
        LoadSessionRequest(session_id=sid, cwd="/work", opening=SessionOpening(mcp_servers=(DB,)))
    )
    second = asyncio.ensure_future(world.announce().execute(sid))
    await asyncio.sleep(0)
    loaded.set()
    await asyncio.gather(first, second)
    assert [o.specs for o in made.opened] == [(DB,)]


async def test_a_prompt_cancelled_while_servers_connect_ends_cancelled(world: World) -> None:
    sid, servers = await opened(world, DOCS)
    world.llm.scripts = [final()]
    turn = asyncio.ensure_future(say(world, sid, "hello"))
    while world.registry.find(sid) is None or not world.registry.find(sid).busy:  # type: ignore[union-attr]
        await asyncio.sleep(0)
    world.cancel().execute(sid)
    assert await turn is StopReason.CANCELLED
    assert world.llm.requests == []
    await servers.settle("docs", McpStatus.CONNECTED)  # connects later, harmlessly
    assert not servers.closed


async def test_closing_one_session_leaves_another_sessions_servers_running(
    world: World,
) -> None:
    _, mine = await opened(world, DOCS)
    world.connector.configure = offering
    other = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(mcp_servers=(DB,)))
    )
    await world.announce().execute(other.session_id)
    theirs = world.connector.opened[-1]
    await world.close().execute(other.session_id)
    assert theirs.closed and not mine.closed


async def test_closing_every_session_stops_every_sessions_servers(world: World) -> None:
    _, one = await opened(world, DOCS)
    _, two = await opened(world, DB)
    await world.registry.close_all()
    assert one.closed and two.closed


async def test_closing_while_replaced_servers_stop_reports_nothing_after_the_close(
    world: World,
) -> None:
    sid, old = await opened(world, DB)
    released = asyncio.Event()

    async def slow_stop() -> None:
        await released.wait()  # the old stdio server takes its time to stop
        old.closed = True

    old.aclose = slow_stop  # type: ignore[method-assign]
    await world.load().execute(
        LoadSessionRequest(session_id=sid, cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    announcing = asyncio.ensure_future(world.announce().execute(sid))
    while len(world.connector.opened) < 2:
        await asyncio.sleep(0)
    new = world.connector.opened[-1]
    await world.close().execute(sid)
    assert new.closed
    after_close = len(world.sink.events)
    released.set()
    await announcing
    assert world.sink.events[after_close:] == []


async def test_a_prompt_cancelled_while_the_connector_loads_ends_at_once(world: World) -> None:
    loaded = asyncio.Event()
    made = world.connector

    async def slow_connector() -> FakeMcpConnector:
        await loaded.wait()  # the MCP SDK importing in its thread
        return made

    made.configure = offering
    world.connector_now = slow_connector  # type: ignore[method-assign]
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(mcp_servers=(DOCS,)))
    )
    sid = state.session_id
    world.llm.scripts = [final()]
    turn = asyncio.ensure_future(say(world, sid, "hello"))
    while not world.registry.require(sid).busy:
        await asyncio.sleep(0)
    world.cancel().execute(sid)
    assert await turn is StopReason.CANCELLED  # without waiting for the SDK
    assert world.llm.requests == []
    loaded.set()
    await until_opened(made)  # the servers still connect, for the next prompt
    assert made.opened[0].specs == (DOCS,)
