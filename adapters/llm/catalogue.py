"""The models each provider offers, with the names people know them by and what they can do."""

from domain.models import ModelInfo

ANTHROPIC = (
    ModelInfo(
        id="claude-sonnet-4-5",
        name="Claude Sonnet 4.5",
        description="Best balance of speed and capability for coding.",
        max_output_tokens=64_000,
    ),
    ModelInfo(
        id="claude-opus-4-5",
        name="Claude Opus 4.5",
        description="Most capable, for the hardest tasks.",
        max_output_tokens=64_000,
    ),
    ModelInfo(
        id="claude-haiku-4-5",
        name="Claude Haiku 4.5",
        description="Fastest, for quick and simple tasks.",
        max_output_tokens=64_000,
    ),
    ModelInfo(id="claude-opus-4-1", name="Claude Opus 4.1", max_output_tokens=32_000),
    ModelInfo(id="claude-sonnet-4-0", name="Claude Sonnet 4", max_output_tokens=64_000),
    ModelInfo(
        id="claude-3-5-haiku-latest",
        name="Claude Haiku 3.5",
        description="Older and fast; no extended thinking.",
        thinking=False,
        max_output_tokens=8_192,
    ),
)

DEMO = (
    ModelInfo(
        id="demo",
        name="Demo (offline, scripted)",
        description="A scripted stand-in for a model, for trying the agent without a key.",
    ),
)

CATALOGUES = {"anthropic": ANTHROPIC, "demo": DEMO}


def catalogue(provider: str, *, only: tuple[str, ...] = ()) -> tuple[ModelInfo, ...]:
    """The provider's models, or only those named (in that order; unknown names too)."""
    known = CATALOGUES.get(provider, ())
    if not only:
        return known
    by_id = {m.id: m for m in known}
    return tuple(by_id.get(name) or ModelInfo(id=name, name=name) for name in only)
