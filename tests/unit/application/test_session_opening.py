"""What a session is opened with: the request's lists are complete, on every kind of open."""

from collections.abc import Mapping

import pytest

from application.dto import SessionOpening
from application.errors import SessionBusy
from application.ports.tools import Progress, ToolContext, ToolResult
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from domain.mcp import McpServerSpec, McpTransport
from domain.permission import PermissionOption
from tests.fakes.turn import FakeTools
from tests.unit.application.test_session_servers import say
from tests.unit.application.test_tools import final, uses
from tests.unit.application.world import World

DOCS = McpServerSpec(name="docs", transport=McpTransport.STDIO, command="d", env={"K": "v4lue"})


def stored(world: World, sid: str) -> tuple[object, object]:
    settings = world.uow.sessions.stored[sid].settings  # type: ignore[index]
    return settings["additional_directories"], settings["mcp_servers"]


async def started(world: World) -> str:
    state = await world.new_session().execute(
        NewSessionRequest(
            cwd="/work",
            opening=SessionOpening(additional_directories=("/lib",), mcp_servers=(DOCS,)),
        )
    )
    return state.session_id


async def test_resume_without_lists_leaves_the_session_with_none(world: World) -> None:
    sid = await started(world)
    await world.close().execute(sid)
    await world.resume().execute(sid, "/work")
    assert stored(world, sid) == ((), ())
    assert world.registry.require(sid).session.roots == ("/work",)
    assert world.registry.require(sid).mcp_wanted == ()


async def test_resume_of_an_open_session_replaces_its_directories(world: World) -> None:
    sid = await started(world)
    await world.resume().execute(
        sid, "/work", SessionOpening(additional_directories=("/other",), mcp_servers=(DOCS,))
    )
    assert stored(world, sid) == (("/other",), (DOCS.stored(),))
    assert world.registry.require(sid).session.additional_directories == ("/other",)


async def test_load_without_lists_leaves_the_session_with_none(world: World) -> None:
    sid = await started(world)
    await world.load().execute(LoadSessionRequest(session_id=sid, cwd="/work"))
    assert stored(world, sid) == ((), ())


async def test_a_fork_takes_the_lists_its_request_gives_and_the_source_keeps_its_own(
    world: World,
) -> None:
    sid = await started(world)
    bare = await world.fork().execute(sid, "/work")
    assert stored(world, bare.session_id) == ((), ())
    assert world.registry.require(bare.session_id).mcp_wanted == ()
    given = await world.fork().execute(
        sid, "/work", SessionOpening(additional_directories=("/x",), mcp_servers=(DOCS,))
    )
    assert stored(world, given.session_id) == (("/x",), (DOCS.stored(),))
    assert world.registry.require(given.session_id).mcp_wanted == (DOCS,)
    assert stored(world, sid) == (("/lib",), (DOCS.stored(),))
    assert world.registry.require(sid).session.additional_directories == ("/lib",)


async def test_no_secret_value_is_stored_by_any_open(world: World) -> None:
    sid = await started(world)
    await world.resume().execute(sid, "/work", SessionOpening(mcp_servers=(DOCS,)))
    forked = await world.fork().execute(sid, "/work", SessionOpening(mcp_servers=(DOCS,)))
    for session_id in (sid, forked.session_id):
        assert "v4lue" not in repr(world.uow.sessions.stored[session_id])  # type: ignore[index]


class ContextTools(FakeTools):
    """Records the context each call ran with."""

    def __init__(self) -> None:
        super().__init__(look=self._look)
        self.contexts: list[ToolContext] = []

    @staticmethod
    async def _look(arguments: Mapping[str, object]) -> ToolResult:
        return ToolResult(text="seen")

    async def run(
        self, name: str, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        self.contexts.append(context)
        return await super().run(name, arguments, context, progress)


async def test_tools_run_with_the_extra_directories_of_the_latest_open(world: World) -> None:
    world.tools = ContextTools()
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/work", opening=SessionOpening(additional_directories=("/lib",)))
    )
    sid = state.session_id
    world.asker.answers = [PermissionOption.ALLOW_ONCE, PermissionOption.ALLOW_ONCE]
    world.llm.scripts = [uses(("look", {})), final()]
    await say(world, sid, "go")
    await world.resume().execute(sid, "/work", SessionOpening(additional_directories=("/b",)))
    world.llm.scripts = [uses(("look", {})), final()]
    await say(world, sid, "again")
    assert [c.roots for c in world.tools.contexts] == [("/lib",), ("/b",)]


async def test_a_running_turn_keeps_its_directories_and_servers(world: World) -> None:
    sid = await started(world)
    world.registry.require(sid).begin_turn()  # a prompt is running
    same = SessionOpening(additional_directories=("/lib",), mcp_servers=(DOCS,))
    await world.resume().execute(sid, "/work", same)  # a reconnecting client: fine
    for other in (
        SessionOpening(additional_directories=("/other",), mcp_servers=(DOCS,)),
        SessionOpening(additional_directories=("/lib",)),
    ):
        with pytest.raises(SessionBusy):
            await world.resume().execute(sid, "/work", other)
    assert stored(world, sid) == (("/lib",), (DOCS.stored(),))
    assert world.registry.require(sid).session.additional_directories == ("/lib",)
