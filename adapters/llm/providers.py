"""Provider profiles: every model provider this server speaks to, as data. The container
picks each adapter from its profile; nothing else in the code names a provider.
Their model catalogues are data in adapters/llm/catalogue.py."""

from dataclasses import dataclass
from enum import StrEnum

from adapters.llm.catalogue import ANTHROPIC, DASHSCOPE, DEEPSEEK, DEMO, OPENAI
from domain.models import ModelInfo


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
    base_url_env: str | None = None  # the provider's own base URL variable, if it has one
    key_optional: bool = False  # local servers take any key, or none
    key_link: str | None = None  # where a user gets a key
    default_model: str = ""
    models: tuple[ModelInfo, ...] = ()
    # Model-name prefixes that select this provider when none is named.
    prefixes: tuple[str, ...] = ()


PROFILES: tuple[ProviderProfile, ...] = (
    ProviderProfile(
        id="anthropic",
        name="Anthropic",
        adapter=Adapter.ANTHROPIC,
        key_env="ANTHROPIC_API_KEY",
        base_url_env="ANTHROPIC_BASE_URL",
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
        base_url_env="OPENAI_BASE_URL",
        key_link="https://platform.openai.com/api-keys",
        default_model="gpt-4.1",
        models=OPENAI,
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
        models=DASHSCOPE,
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
        models=DEEPSEEK,
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
