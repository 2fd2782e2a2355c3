"""Provider profiles: every model provider this server speaks to, as data. The container
picks each adapter from its profile; nothing else in the code names a provider.

Prices are list prices in USD per million tokens as the providers publish them (December
2026); config.toml overrides any of it (`[catalogue."<model id>"]`, `[providers.<id>]`)."""

from dataclasses import dataclass
from enum import StrEnum

from adapters.llm.catalogue import ANTHROPIC, DEMO
from domain.models import ModelInfo, Prices


class Adapter(StrEnum):
    ANTHROPIC = "anthropic"  # the Anthropic SDK, Messages API
    OPENAI = "openai"  # the OpenAI SDK, streaming chat completions
    DEMO = "demo"  # offline and scripted


class Dialect(StrEnum):
    """How an OpenAI-compatible endpoint differs from OpenAI's own."""

    OPENAI = "openai"  # reasoning models take `reasoning_effort`; no reasoning text streamed
    DASHSCOPE = "dashscope"  # Qwen: `enable_thinking` / `thinking_budget`; `reasoning_content`
    DEEPSEEK = "deepseek"  # deepseek-reasoner always reasons; `reasoning_content`
    GENERIC = "generic"  # vLLM, Ollama, LM Studio: `reasoning_content` when a model streams it


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderProfile:
    id: str
    name: str
    adapter: Adapter
    dialect: Dialect = Dialect.GENERIC
    base_url: str | None = None  # None: the SDK's own (or, for openai_compatible, required)
    key_env: str | None = None  # the provider's own key variable
    key_optional: bool = False  # local servers take any key, or none
    key_link: str | None = None  # where a user gets a key
    default_model: str = ""
    models: tuple[ModelInfo, ...] = ()
    # Model-name prefixes that select this provider when none is named.
    prefixes: tuple[str, ...] = ()


def _usd(input: float, output: float, cache_read: float = 0.0) -> Prices:
    return Prices(input=input, output=output, cache_read=cache_read)


OPENAI_MODELS = (
    ModelInfo(
        id="gpt-4.1",
        name="GPT-4.1",
        thinking=False,
        context_window=1_047_576,
        max_output_tokens=32_768,
        prices=_usd(2.0, 8.0, 0.5),
    ),
    ModelInfo(
        id="gpt-4.1-mini",
        name="GPT-4.1 mini",
        thinking=False,
        context_window=1_047_576,
        max_output_tokens=32_768,
        prices=_usd(0.4, 1.6, 0.1),
    ),
    ModelInfo(
        id="gpt-4o",
        name="GPT-4o",
        thinking=False,
        context_window=128_000,
        max_output_tokens=16_384,
        prices=_usd(2.5, 10.0, 1.25),
    ),
    ModelInfo(
        id="o4-mini",
        name="o4-mini",
        reasoning_effort=True,
        context_window=200_000,
        max_output_tokens=100_000,
        prices=_usd(1.1, 4.4, 0.275),
    ),
    ModelInfo(
        id="o3",
        name="o3",
        reasoning_effort=True,
        context_window=200_000,
        max_output_tokens=100_000,
        prices=_usd(2.0, 8.0, 0.5),
    ),
)

DASHSCOPE_MODELS = (
    ModelInfo(
        id="qwen3-coder-plus",
        name="Qwen3 Coder Plus",
        description="Qwen's coding model (the reference system's default).",
        thinking=False,
        images=False,
        context_window=1_000_000,
        max_output_tokens=65_536,
        prices=_usd(1.0, 5.0, 0.1),
    ),
    ModelInfo(
        id="qwen-plus",
        name="Qwen Plus",
        images=False,
        context_window=131_072,
        max_output_tokens=16_384,
        prices=_usd(0.4, 1.2),
    ),
    ModelInfo(
        id="qwen-max",
        name="Qwen Max",
        thinking=False,
        images=False,
        context_window=32_768,
        max_output_tokens=8_192,
        prices=_usd(1.6, 6.4),
    ),
    ModelInfo(
        id="qwen-vl-max",
        name="Qwen VL Max",
        description="Reads images.",
        thinking=False,
        context_window=131_072,
        max_output_tokens=8_192,
        prices=_usd(0.8, 3.2),
    ),
)

DEEPSEEK_MODELS = (
    ModelInfo(
        id="deepseek-chat",
        name="DeepSeek Chat",
        thinking=False,
        images=False,
        context_window=128_000,
        max_output_tokens=8_192,
        prices=_usd(0.28, 0.42, 0.028),
    ),
    ModelInfo(
        id="deepseek-reasoner",
        name="DeepSeek Reasoner",
        description="Always reasons first; its reasoning is shown as thoughts.",
        thinking=False,  # no level to choose: it always reasons
        images=False,
        context_window=128_000,
        max_output_tokens=64_000,
        prices=_usd(0.28, 0.42, 0.028),
    ),
)

PROFILES: tuple[ProviderProfile, ...] = (
    ProviderProfile(
        id="anthropic",
        name="Anthropic",
        adapter=Adapter.ANTHROPIC,
        key_env="ANTHROPIC_API_KEY",
        key_link="https://console.anthropic.com/settings/keys",
        default_model="claude-sonnet-4-5",
        models=ANTHROPIC,
        prefixes=("claude-",),
    ),
    ProviderProfile(
        id="openai",
        name="OpenAI",
        adapter=Adapter.OPENAI,
        dialect=Dialect.OPENAI,
        key_env="OPENAI_API_KEY",
        key_link="https://platform.openai.com/api-keys",
        default_model="gpt-4.1",
        models=OPENAI_MODELS,
        prefixes=("gpt-", "o1", "o3", "o4"),
    ),
    ProviderProfile(
        id="dashscope",
        name="Alibaba Cloud DashScope (Qwen)",
        adapter=Adapter.OPENAI,
        dialect=Dialect.DASHSCOPE,
        base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        key_env="DASHSCOPE_API_KEY",
        key_link="https://bailian.console.alibabacloud.com/?apiKey=1",
        default_model="qwen3-coder-plus",
        models=DASHSCOPE_MODELS,
        prefixes=("qwen",),
    ),
    ProviderProfile(
        id="deepseek",
        name="DeepSeek",
        adapter=Adapter.OPENAI,
        dialect=Dialect.DEEPSEEK,
        base_url="https://api.deepseek.com",
        key_env="DEEPSEEK_API_KEY",
        key_link="https://platform.deepseek.com/api_keys",
        default_model="deepseek-chat",
        models=DEEPSEEK_MODELS,
        prefixes=("deepseek-",),
    ),
    ProviderProfile(
        id="openai_compatible",
        name="OpenAI-compatible server (vLLM, Ollama, LM Studio, …)",
        adapter=Adapter.OPENAI,
        dialect=Dialect.GENERIC,
        key_env="IAC_CODE_API_KEY",
        key_optional=True,
    ),
    ProviderProfile(
        id="demo",
        name="Demo (offline)",
        adapter=Adapter.DEMO,
        key_optional=True,
        default_model="demo",
        models=DEMO,
    ),
)

BY_ID = {p.id: p for p in PROFILES}


def normalise(name: str) -> str:
    """Provider names as people write them: `OpenAI-Compatible`, `open ai`, `deep_seek`."""
    squashed = "".join(c for c in name.lower() if c.isalnum())
    for profile in PROFILES:
        if profile.id.replace("_", "") == squashed:
            return profile.id
    return name.strip().lower()


def by_prefix(model: str) -> ProviderProfile | None:
    """The provider a model name belongs to, by its prefix (`claude-`, `gpt-`, `qwen`, …)."""
    lowered = model.lower()
    for profile in PROFILES:
        if any(lowered.startswith(p) for p in profile.prefixes):
            return profile
    return None
