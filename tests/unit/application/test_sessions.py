import pytest

from application.errors import AuthRequired, SessionNotFound
from application.sessions.load_session import LoadSessionRequest
from application.sessions.new_session import NewSessionRequest
from application.sessions.settings import SetConfigOptionRequest, SetModeRequest
from domain.content import ResourceLinkBlock, TextBlock, ThinkingBlock
from domain.errors import InvalidConfigValue, InvalidWorkingDirectory, UnknownMode
from domain.events import (
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallUpdated,
    UserContentReplayed,
)
from domain.message import Role
from domain.tool_call import TextOutput, ToolCallStatus
from tests.factories import MessageFactory, SessionFactory
from tests.unit.application.world import World


async def test_new_session_is_stored_and_opened(world: World) -> None:
    state = await world.new_session().execute(NewSessionRequest(cwd="/home/dev/p"))
    assert state.session_id in world.uow.sessions.stored
    assert world.registry.find(state.session_id) is not None
    assert state.current_mode_id == "default"
    assert {o.id: o.current_value for o in state.options} == {
        "mode": "default",
        "model": "m1",
        "thought_level": "off",
    }
    assert world.uow.commits == 1


async def test_new_session_needs_credentials(world: World) -> None:
    world.llm._credentials = False
    with pytest.raises(AuthRequired):
        await world.new_session().execute(NewSessionRequest(cwd="/p"))
    assert world.uow.sessions.stored == {}


async def test_new_session_rejects_relative_cwd(world: World) -> None:
    with pytest.raises(InvalidWorkingDirectory):
        await world.new_session().execute(NewSessionRequest(cwd="p"))


async def test_choosing_a_model_changes_the_next_request(world: World) -> None:
    state = await world.new_session().execute(NewSessionRequest(cwd="/p"))
    new_state = await world.set_option().execute(
        SetConfigOptionRequest(session_id=state.session_id, option_id="model", value="m2")
    )
    assert {o.id: o.current_value for o in new_state.options} == {"mode": "default", "model": "m2"}
    assert world.uow.sessions.stored[state.session_id].settings["model"] == "m2"
    with pytest.raises(InvalidConfigValue):
        await world.set_option().execute(
            SetConfigOptionRequest(session_id=state.session_id, option_id="model", value="m3")
        )
    with pytest.raises(SessionNotFound):
        await world.set_option().execute(
            SetConfigOptionRequest(session_id="sess_nope", option_id="model", value="m2")
        )


async def test_set_mode_accepts_only_offered_modes(world: World) -> None:
    state = await world.new_session().execute(NewSessionRequest(cwd="/p"))
    await world.set_mode().execute(SetModeRequest(session_id=state.session_id, mode_id="default"))
    with pytest.raises(UnknownMode):
        await world.set_mode().execute(SetModeRequest(session_id=state.session_id, mode_id="yolo"))


async def _stored_session(world: World):  # type: ignore[no-untyped-def]
    session = SessionFactory(cwd="/p", model="m1")
    for message in (
        MessageFactory(
            content=(TextBlock(text="hi"), ResourceLinkBlock(uri="file:///p/a", name="a"))
        ),
        MessageFactory(
            role=Role.ASSISTANT,
            content=(ThinkingBlock(thinking="t", signature="s"), TextBlock(text="hello")),
        ),
        MessageFactory(asking_tool=True),
        MessageFactory(tool_answer=True),
    ):
        session.add_message(message)
    await world.uow.sessions.add(session)
    return session


async def test_load_replays_history_and_opens_the_session(world: World) -> None:
    session = await _stored_session(world)
    state = await world.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    assert state.session_id == session.id
    events = [e for _, e in world.sink.events]
    assert [type(e) for e in events] == [
        UserContentReplayed,
        UserContentReplayed,
        ThinkingDelta,
        TextDelta,
        TextDelta,
        ToolCallStarted,
        ToolCallUpdated,
    ]
    started, finished = events[-2:]
    assert isinstance(started, ToolCallStarted)
    assert (started.tool_call_id, started.title, started.name) == (
        "toolu_1",
        "Read a.py",
        "read_file",
    )
    assert isinstance(finished, ToolCallUpdated)
    assert finished.status is ToolCallStatus.COMPLETED
    assert finished.output == (TextOutput(text="print('a')"),)
    assert isinstance(events[1], UserContentReplayed)
    assert events[1].block == ResourceLinkBlock(uri="file:///p/a", name="a")
    assert world.registry.find(session.id) is not None


async def test_loading_an_open_session_replays_again_without_a_second_runtime(world: World) -> None:
    session = await _stored_session(world)
    request = LoadSessionRequest(session_id=session.id, cwd="/p")
    await world.load().execute(request)
    active = world.registry.find(session.id)
    await world.load().execute(request)
    assert world.registry.find(session.id) is active
    assert len(world.sink.events) == 14
    assert len(world.registry) == 1


async def test_load_unknown_or_elsewhere(world: World) -> None:
    session = await _stored_session(world)
    with pytest.raises(SessionNotFound) as caught:
        await world.load().execute(LoadSessionRequest(session_id="sess_x", cwd="/p"))
    assert caught.value.details["sessionId"] == "sess_x"
    with pytest.raises(SessionNotFound) as caught:
        await world.load().execute(LoadSessionRequest(session_id=session.id, cwd="/other"))
    assert caught.value.details["cwd"] == "/p"
    assert world.sink.events == []


async def test_a_recorded_tool_call_replays_as_it_was_shown(world: World) -> None:
    from domain.ids import ToolCallId
    from domain.tool_call import DiffOutput, ToolCallRecord, ToolKind

    session = await _stored_session(world)
    record = ToolCallRecord(
        id=ToolCallId("toolu_1"),
        name="read_file",
        title="Read a.py",
        kind=ToolKind.READ,
        arguments={"path": "a.py"},
        status=ToolCallStatus.FAILED,
        locations=("/p/a.py",),
        output=(DiffOutput(path="/p/a.py", old_text="x", new_text="y"),),
        raw_output={"k": 1},
    )
    await world.uow.activity.record_tool_call(session.id, record)
    await world.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    started, finished = [e for _, e in world.sink.events][-2:]
    assert started.locations == ("/p/a.py",)  # type: ignore[union-attr]
    assert finished.status is ToolCallStatus.FAILED  # type: ignore[union-attr]
    assert finished.output == record.output  # type: ignore[union-attr]
    assert finished.raw_output == {"k": 1}  # type: ignore[union-attr]


async def test_load_repairs_a_broken_history_once_and_persists_it(world: World) -> None:
    session = SessionFactory(cwd="/p")
    session.add_message(MessageFactory())
    session.add_message(MessageFactory(asking_tool=True))  # crashed while the tool ran
    await world.uow.sessions.add(session)
    await world.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    stored = world.uow.sessions.messages[session.id]
    assert len(stored) == 3
    assert stored[-1].tool_results[0].is_error
    commits = world.uow.commits
    await world.close().execute(session.id)
    await world.load().execute(LoadSessionRequest(session_id=session.id, cwd="/p"))
    assert world.uow.commits == commits  # nothing left to repair
