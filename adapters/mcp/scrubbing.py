"""Keeping a server's credentials (its env and header values) out of everything we pass on."""

from collections.abc import Iterable

from domain.mcp import McpServerSpec

MASK = "***"
# Shorter values ("1", "on", "dev") are settings, not credentials, and masking them would
# garble every message they happen to occur in.
MIN_SECRET = 4


class Scrubber:
    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first, so a secret containing another is masked whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)

    @classmethod
    def of(cls, spec: McpServerSpec) -> "Scrubber":
        values = [*spec.env.values(), *spec.headers.values()]
        # "Bearer <token>": the token alone may show up too (e.g. in a server's echo of it).
        parts = [part for value in spec.headers.values() for part in value.split()]
        return cls([*values, *parts])

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text
