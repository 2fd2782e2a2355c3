"""Each request goes to the provider of its model."""

from adapters.llm.routing import RoutingLLMClient
from application.ports.llm import ModelRequest, ModelResponse
from domain.content import TextBlock
from domain.stop_reason import ModelStop
from domain.usage import Usage
from tests.fakes.turn import ScriptedLLM


def answer(text: str) -> list:
    return [ModelResponse(content=(TextBlock(text=text),), stop=ModelStop.END_TURN, usage=Usage())]


def request(model: str) -> ModelRequest:
    return ModelRequest(model=model, system="s", messages=(), max_tokens=10)


async def test_requests_go_to_the_provider_of_their_model() -> None:
    claude, qwen = ScriptedLLM(answer("from claude")), ScriptedLLM(answer("from qwen"))
    router = RoutingLLMClient(
        clients={"anthropic": claude, "dashscope": qwen},
        routes={"claude-x": "anthropic", "qwen-x": "dashscope"},
        default="anthropic",
    )
    [reply] = [e async for e in router.stream(request("qwen-x"))]
    assert isinstance(reply, ModelResponse) and reply.content == (TextBlock(text="from qwen"),)
    [reply] = [e async for e in router.stream(request("unknown-model"))]  # the selected one's
    assert reply.content == (TextBlock(text="from claude"),)  # type: ignore[union-attr]
    assert [r.model for r in qwen.requests] == ["qwen-x"]
    assert [r.model for r in claude.requests] == ["unknown-model"]


def test_credentials_are_the_selected_providers() -> None:
    router = RoutingLLMClient(
        clients={"a": ScriptedLLM(credentials=False), "b": ScriptedLLM()},
        routes={},
        default="a",
    )
    assert not router.has_credentials()
