"""Running a slash command and reading what it stored and said, for the command tests."""

from domain.events import Notice
from domain.message import Message, MessageKind
from domain.stop_reason import StopReason
from tests.unit.application.test_prompt import ask
from tests.unit.application.world import World

BUILT_IN = ["compact", "clear", "rename", "model", "mode", "usage", "help"]


def stored(world: World, sid: str) -> list[Message]:
    return world.uow.sessions.messages[sid]  # type: ignore[index]


def last_notice(world: World) -> Notice:
    notice = world.sink.of_type(Notice)[-1]
    assert isinstance(notice, Notice)
    return notice


async def run(world: World, sid: str, text: str) -> str:
    """Run a command; returns the answer it stored (and showed)."""
    result = await world.prompt().execute(ask(sid, text))
    assert result.stop_reason is StopReason.END_TURN
    answer = stored(world, sid)[-1]
    assert answer.kind is MessageKind.COMMAND_OUTPUT
    assert last_notice(world) == Notice(message_id=answer.id, text=answer.visible_text())
    return answer.visible_text()
