"""One LLM port over several providers: each request goes to the provider of its model, so
a session can switch between, say, a Claude and a Qwen model and go on."""

from collections.abc import AsyncIterator, Mapping

from application.ports.llm import LLMClient, ModelEvent, ModelRequest


class RoutingLLMClient(LLMClient):
    def __init__(
        self, *, clients: Mapping[str, LLMClient], routes: Mapping[str, str], default: str
    ) -> None:
        """`clients` by provider id; `routes`: model id → provider id (any other model goes
        to `default`, the selected provider)."""
        self._clients = dict(clients)
        self._routes = dict(routes)
        self._default = default

    def has_credentials(self) -> bool:
        return self._clients[self._default].has_credentials()

    def client_for(self, model: str) -> LLMClient:
        return self._clients[self._routes.get(model, self._default)]

    def resolve(self) -> None:
        """Warm the selected provider's client (its SDK import is slow): see warm_model."""
        resolve = getattr(self._clients[self._default], "resolve", None)
        if resolve is not None:
            resolve()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self.client_for(request.model).stream(request)  # no step per delta in between
