import asyncio
from collections.abc import AsyncIterator, Mapping

import pytest

from application.errors import AuthRequired, ModelUnavailable, SessionBusy, SessionNotFound
from application.ports.llm import ModelRequest, ModelResponse, TextChunk, ThinkingChunk
from application.ports.tools import ToolResult
from application.sessions.new_session import NewSessionRequest
from application.turn.prompt import PromptRequest
from domain.content import ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from domain.events import (
    NoticeSeverity,
    SessionNotice,
    SessionTitleChanged,
    TextDelta,
    ThinkingDelta,
)
from domain.message import Role
from domain.stop_reason import ModelStop, StopReason
from domain.usage import Usage
from tests.unit.application.world import World


def reply(text: str, stop: ModelStop = ModelStop.END_TURN, usage: Usage | None = None) -> list:
    return [
        TextChunk(text=text),
        ModelResponse(
            content=(TextBlock(text=text),),
            stop=stop,
            usage=usage or Usage(input_tokens=3, output_tokens=2),
        ),
    ]


async def hang(_: ModelRequest) -> AsyncIterator:
    """A model that never answers."""
    await asyncio.Event().wait()
    yield TextChunk(text="unreachable")


def tool_reply(n: int) -> list:
    use = ToolUseBlock(id=f"toolu_{n}", name="read_file", input={"path": "a"})
    return [
        ModelResponse(
            content=(use,), stop=ModelStop.TOOL_USE, usage=Usage(input_tokens=1, output_tokens=1)
        )
    ]


async def open_session(world: World) -> str:
    state = await world.new_session().execute(NewSessionRequest(cwd="/home/dev/p"))
    return state.session_id


def ask(session_id: str, text: str = "Hello there") -> PromptRequest:
    return PromptRequest(session_id=session_id, content=(TextBlock(text=text),))


async def test_a_reply_streams_and_ends_the_turn(world: World) -> None:
    world.llm.scripts = [
        [
            ThinkingChunk(text="hmm"),
            TextChunk(text="Hi "),
            TextChunk(text="you"),
            ModelResponse(
                content=(ThinkingBlock(thinking="hmm", signature="s"), TextBlock(text="Hi you")),
                stop=ModelStop.END_TURN,
                usage=Usage(input_tokens=5, output_tokens=2),
            ),
        ]
    ]
    sid = await open_session(world)

    result = await world.prompt().execute(ask(sid))

    assert result.stop_reason is StopReason.END_TURN
    assert result.usage == Usage(input_tokens=5, output_tokens=2)
    deltas = world.sink.of_type(TextDelta)
    assert [d.text for d in deltas] == ["Hi ", "you"]
    assert len({d.message_id for d in deltas}) == 1  # chunks of one message share its id
    assert [t.text for t in world.sink.of_type(ThinkingDelta)] == ["hmm"]
    stored = world.uow.sessions.messages[sid]
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT]
    assert stored[1].id == deltas[0].message_id
    assert stored[1].content[0] == ThinkingBlock(thinking="hmm", signature="s")


async def test_first_prompt_titles_the_session_and_tells_the_client(world: World) -> None:
    world.llm.scripts = [reply("ok")]
    sid = await open_session(world)
    await world.prompt().execute(ask(sid, "  Fix the build\nplease"))
    assert world.sink.of_type(SessionTitleChanged) == [SessionTitleChanged(title="Fix the build")]


async def test_each_message_is_committed_as_it_completes(world: World) -> None:
    world.llm.scripts = [reply("ok")]
    sid = await open_session(world)
    commits_before = world.uow.commits
    await world.prompt().execute(ask(sid))
    # user message, assistant message, turn record: three short transactions.
    assert world.uow.commits - commits_before == 3


async def test_the_model_sees_attachments_as_markers_and_the_chosen_model(world: World) -> None:
    world.llm.scripts = [reply("ok")]
    sid = await open_session(world)
    await world.prompt().execute(
        PromptRequest(
            session_id=sid,
            content=(TextBlock(text="what is this"), ImageBlock(mime_type="image/png")),
        )
    )
    request = world.llm.requests[0]
    assert request.model == "m1"
    assert request.messages[0].content == (
        TextBlock(text="what is this"),
        TextBlock(text="[image: image/png]"),
    )
    assert "/home/dev/p" in request.system


async def test_stop_reasons_from_the_model(world: World) -> None:
    world.llm.scripts = [reply("cut", ModelStop.MAX_TOKENS), reply("no", ModelStop.REFUSAL)]
    sid = await open_session(world)
    assert (await world.prompt().execute(ask(sid))).stop_reason is StopReason.MAX_TOKENS
    assert (await world.prompt().execute(ask(sid))).stop_reason is StopReason.REFUSAL


async def test_tool_uses_are_answered_and_the_loop_continues(world: World) -> None:
    world.llm.scripts = [tool_reply(1), reply("done")]
    sid = await open_session(world)
    result = await world.prompt().execute(ask(sid))
    assert result.stop_reason is StopReason.END_TURN
    second = world.llm.requests[1].messages
    answer = second[-1].content[0]
    assert isinstance(answer, ToolResultBlock) and answer.is_error
    assert answer.tool_use_id == "toolu_1"
    # usage covers every model call of the turn
    assert result.usage == Usage(input_tokens=4, output_tokens=3)


async def test_max_turn_requests_stops_a_model_that_never_ends(world: World) -> None:
    ran: list[str] = []

    async def read(arguments: Mapping[str, object]) -> ToolResult:
        ran.append(str(arguments["path"]))
        return ToolResult(text="ok")

    world.tools.tools = {"read_file": read}
    world.llm.scripts = [tool_reply(n) for n in range(3)]
    sid = await open_session(world)
    result = await world.prompt(max_turn_requests=3).execute(ask(sid))
    assert result.stop_reason is StopReason.MAX_TURN_REQUESTS
    assert len(world.llm.requests) == 3
    assert result.usage.total_tokens == 6
    # the last request's tool calls are answered but not run: the model would never see them
    assert ran == ["a", "a"]
    last = world.uow.sessions.messages[sid][-1].tool_results[0]
    assert last.is_error
    assert "limit of 3 model requests" in last.content


async def test_cancel_mid_stream_keeps_what_the_user_saw(world: World) -> None:
    release = asyncio.Event()

    async def slow(_: ModelRequest) -> AsyncIterator:
        yield TextChunk(text="Partial ")
        await release.wait()
        yield TextChunk(text="never")

    world.llm.scripts = [slow, reply("after")]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    while not world.sink.of_type(TextDelta):
        await asyncio.sleep(0)
    world.cancel().execute(sid)
    result = await asyncio.wait_for(running, 1)

    assert result.stop_reason is StopReason.CANCELLED
    stored = world.uow.sessions.messages[sid]
    assert stored[-1].interrupted and stored[-1].visible_text() == "Partial "
    # The session takes the next prompt at once, with a history the provider accepts.
    assert (await world.prompt().execute(ask(sid, "again"))).stop_reason is StopReason.END_TURN
    roles = [m.role for m in world.llm.requests[1].messages]
    assert roles == [Role.USER, Role.ASSISTANT, Role.USER]


async def test_a_cancelled_reply_is_charged_a_token_for_each_delta_shown(world: World) -> None:
    # A chunk may join several of the model's deltas (they arrived together): the cut
    # reply is charged for each of them, as if they had come one by one.
    release = asyncio.Event()

    async def slow(_: ModelRequest) -> AsyncIterator:
        yield ThinkingChunk(text="hm", deltas=2)
        yield TextChunk(text="Partial ", deltas=3)
        await release.wait()
        yield TextChunk(text="never")

    world.llm.scripts = [slow]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    while not world.sink.of_type(TextDelta):
        await asyncio.sleep(0)
    world.cancel().execute(sid)
    result = await asyncio.wait_for(running, 1)

    assert result.stop_reason is StopReason.CANCELLED
    assert result.usage.output_tokens == 5


async def test_cancel_before_any_output_leaves_only_the_prompt(world: World) -> None:
    world.llm.scripts = [hang]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    await world.llm.started.wait()
    world.cancel().execute(sid)
    assert (await asyncio.wait_for(running, 1)).stop_reason is StopReason.CANCELLED
    assert [m.role for m in world.uow.sessions.messages[sid]] == [Role.USER]


async def test_one_prompt_at_a_time(world: World) -> None:
    world.llm.scripts = [hang]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    await world.llm.started.wait()
    with pytest.raises(SessionBusy):
        await world.prompt().execute(ask(sid, "second"))
    world.cancel().execute(sid)
    await running


async def test_provider_failure_is_shown_then_raised(world: World) -> None:
    async def fails_midway(_: ModelRequest) -> AsyncIterator:
        yield TextChunk(text="Starting")
        raise ModelUnavailable("The provider failed (500): boom")

    world.llm.scripts = [fails_midway]
    sid = await open_session(world)
    with pytest.raises(ModelUnavailable):
        await world.prompt().execute(ask(sid))
    (notice,) = world.sink.of_type(SessionNotice)
    assert isinstance(notice, SessionNotice)
    assert notice.severity is NoticeSeverity.ERROR
    assert notice.description is not None and "boom" in notice.description
    # a client without notices is told as before
    assert notice.fallback is not None and "[model provider error: " in notice.fallback.text
    assert "boom" in notice.fallback.text
    stored = world.uow.sessions.messages[sid]
    assert stored[-1].interrupted and stored[-1].visible_text() == "Starting"
    _, turn, error = world.uow.sessions.turns[-1]
    assert error is not None and turn.stop_reason is None
    # the session is usable again
    world.llm.scripts = [reply("fine")]
    assert (await world.prompt().execute(ask(sid))).stop_reason is StopReason.END_TURN


async def test_a_stream_without_a_final_response_is_a_provider_failure(world: World) -> None:
    world.llm.scripts = [[TextChunk(text="dangling")]]
    sid = await open_session(world)
    with pytest.raises(ModelUnavailable):
        await world.prompt().execute(ask(sid))


async def test_closed_or_unknown_sessions_cannot_be_prompted(world: World) -> None:
    sid = await open_session(world)
    await world.close().execute(sid)
    with pytest.raises(SessionNotFound) as caught:
        await world.prompt().execute(ask(sid))
    assert caught.value.details == {"sessionId": sid}


async def test_close_cancels_the_running_turn(world: World) -> None:
    world.llm.scripts = [hang]
    sid = await open_session(world)
    running = asyncio.create_task(world.prompt().execute(ask(sid)))
    await world.llm.started.wait()
    await asyncio.wait_for(world.close().execute(sid), 1)
    # close answered only once the turn had ended and stored what it had
    assert running.done()
    assert running.result().stop_reason is StopReason.CANCELLED
    assert world.registry.find(sid) is None
    assert world.uow.sessions.turns[-1][1].stop_reason is StopReason.CANCELLED


async def test_prompt_needs_credentials(world: World) -> None:
    sid = await open_session(world)
    world.llm._credentials = False
    with pytest.raises(AuthRequired):
        await world.prompt().execute(ask(sid))
