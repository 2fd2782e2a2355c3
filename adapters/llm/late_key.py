"""A provider's client whose key may come after the server started: `iac-code login` stores
it in config.toml while an editor keeps the agent running. While the client has no key,
each `has_credentials()` (asked before a session opens, before a prompt, by `authenticate`)
asks `renew` for a client built with the key configured now; the first one that has a key
replaces it for good. Once there is a key nothing is read again."""

from collections.abc import AsyncIterator, Callable

from application.ports.llm import LLMClient, ModelEvent, ModelRequest


class LateKeyClient(LLMClient):
    def __init__(self, *, client: LLMClient, renew: Callable[[], LLMClient | None]) -> None:
        self._client = client
        self._renew = renew

    def has_credentials(self) -> bool:
        if self._client.has_credentials():
            return True
        fresh = self._renew()
        if fresh is None or not fresh.has_credentials():
            return False
        self._client = fresh
        return True

    def resolve(self) -> None:
        """Warm the SDK (see DeferredLLMClient.resolve), whichever client serves now."""
        resolve = getattr(self._client, "resolve", None)
        if resolve is not None:
            resolve()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self._client.stream(request)
