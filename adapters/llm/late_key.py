"""A provider's client whose key lives in config.toml, or will: `iac-code login` stores or
replaces it there while an editor keeps the agent running. Each `has_credentials()` (asked
before a session opens, before a prompt, by `authenticate`) first asks `renew` for a client
built with a key stored since the last look; one that has a key replaces the client. So a
server started without a key, or with one the provider now refuses, serves the key signed in
with last, without a restart. A key removed from the file is kept until the next start."""

from collections.abc import AsyncIterator, Callable

from application.ports.llm import LLMClient, ModelEvent, ModelRequest


class LateKeyClient(LLMClient):
    def __init__(self, *, client: LLMClient, renew: Callable[[], LLMClient | None]) -> None:
        """`renew`: a client for a key stored since it was last called, else None (cheap
        when nothing changed: it runs before every prompt)."""
        self._client = client
        self._renew = renew

    def has_credentials(self) -> bool:
        fresh = self._renew()
        if fresh is not None and fresh.has_credentials():
            self._client = fresh
        return self._client.has_credentials()

    def resolve(self) -> None:
        """Warm the SDK (see DeferredLLMClient.resolve), whichever client serves now."""
        resolve = getattr(self._client, "resolve", None)
        if resolve is not None:
            resolve()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self._client.stream(request)
