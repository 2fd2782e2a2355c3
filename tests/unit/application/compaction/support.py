"""A small-window model, scripted answers and summaries, the compaction tests share."""

from application.ports.llm import ModelResponse, TextChunk
from domain.config import Catalog
from domain.content import TextBlock
from domain.message import Message
from domain.models import ModelInfo, Prices
from domain.modes import offered_modes
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.unit.application.test_prompt import ask
from tests.unit.application.world import World

WINDOW = 10_000
PRICES = Prices(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, currency="EUR")
SMALL = Catalog(
    modes=offered_modes(allow_bypass=True),
    models=(
        ModelInfo(id="m1", name="M1", context_window=WINDOW, prices=PRICES),
        ModelInfo(id="m2", name="M2", context_window=WINDOW),
    ),
)


def answer(text: str, input_tokens: int, output_tokens: int = 100) -> list:
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return [
        TextChunk(text=text),
        ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=usage),
    ]


def summary(text: str = "SUMMARY: they fixed the parser.", input_tokens: int = 300) -> list:
    usage = Usage(input_tokens=input_tokens, output_tokens=50)
    return [ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=usage)]


def chat_texts(messages: tuple[Message, ...] | list[Message]) -> list[list[str]]:
    return [[b.text for b in m.content if isinstance(b, TextBlock)] for m in messages]


def stored(world: World, sid: str) -> list[Message]:
    return world.uow.sessions.messages[sid]  # type: ignore[index]


def overhead(world: World, sid: str) -> int:
    return world.requests().overhead(world.registry.require(sid).session)


async def two_turns(world: World, sid: str, last_context: int) -> None:
    """Two finished turns; the second reply's request counted `last_context` tokens."""
    world.llm.scripts = [
        answer("first answer", 1_000),
        answer("second answer", last_context - 100),
    ]
    await world.prompt().execute(ask(sid, "first question"))
    await world.prompt().execute(ask(sid, "second question"))
