"""The models a session may use and the client that serves each: built from the provider
profiles, so no other module names a provider."""

from dataclasses import replace

from adapters.llm.catalogue import catalogue
from adapters.llm.deferred import DeferredLLMClient
from adapters.llm.demo import DemoLLMClient
from adapters.llm.late_key import LateKeyClient
from adapters.llm.providers import Adapter
from adapters.llm.routing import RoutingLLMClient
from application.ports.llm import LLMClient
from application.use_cases.initialize import Initialize
from bootstrap.provider_settings import Endpoint, ProviderConfig
from bootstrap.settings import Settings
from domain.models import ModelInfo


def selected_endpoint(settings: Settings) -> Endpoint:
    if settings.endpoint is not None:
        return settings.endpoint
    # Settings built in code (tests, embedders) name the provider, key and URL directly.
    return Endpoint(
        profile=settings.profile,
        api_key=settings.api_key,
        base_url=settings.base_url,
        config=ProviderConfig(),
    )


def _models(endpoint: Endpoint, settings: Settings, *, selected: bool) -> tuple[ModelInfo, ...]:
    """One provider's offered models: IAC_CODE_MODELS (the selected provider's), else its
    config.toml list, else its catalogue; config.toml's tables applied."""
    profile = endpoint.profile
    overrides = {**settings.catalogue_overrides, **endpoint.config.overrides}
    if profile.adapter is Adapter.DEMO:
        return catalogue(profile.id, overrides=overrides)
    only = (settings.models if selected else ()) or endpoint.config.models
    models = catalogue(profile.id, only=only, overrides=overrides, adds=selected)
    if selected and settings.model not in {m.id for m in models}:  # the configured one first
        named = catalogue(profile.id, only=(settings.model,), overrides=overrides)
        models = (*named, *models)
    return models


def offered(settings: Settings) -> list[tuple[Endpoint, ModelInfo]]:
    """Every model a session may choose, with the provider that serves it: the selected
    provider's first, then those of the other providers configured with a key."""
    found: list[tuple[Endpoint, ModelInfo]] = []
    seen: set[str] = set()
    endpoints = [(selected_endpoint(settings), True), *((e, False) for e in settings.others)]
    for endpoint, selected in endpoints:
        for model in _models(endpoint, settings, selected=selected):
            if model.id not in seen:
                seen.add(model.id)
                found.append((endpoint, model))
    return found


def build_client(endpoint: Endpoint, settings: Settings) -> LLMClient:
    """The provider's SDK client (imported here, on first need: the SDKs are slow to load)."""
    profile = endpoint.profile
    if profile.adapter is Adapter.ANTHROPIC:
        from adapters.llm.anthropic import AnthropicLLMClient, make_anthropic_client

        return AnthropicLLMClient(
            client=make_anthropic_client(
                api_key=endpoint.api_key,
                base_url=endpoint.base_url,
                max_retries=0,  # the turn asks again itself (provider_retry)
                timeout=settings.request_timeout,
                told_attempts=settings.max_retries + 1,
            )
        )
    from adapters.llm.openai_chat import OpenAIChatClient, make_openai_client

    return OpenAIChatClient(
        client=make_openai_client(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            max_retries=0,  # the turn asks again itself (provider_retry)
            timeout=settings.request_timeout,
            key_optional=profile.key_optional,
            told_attempts=settings.max_retries + 1,
        ),
        dialect=profile.dialect,
        key_env=endpoint.key_variable,
    )


def build_llm(settings: Settings) -> LLMClient:
    selected = selected_endpoint(settings)
    if selected.profile.adapter is Adapter.DEMO:
        return DemoLLMClient(pace=settings.demo_pace)
    clients: dict[str, LLMClient] = {}
    routes: dict[str, str] = {}
    for endpoint, model in offered(settings):
        provider = endpoint.profile.id
        routes[model.id] = provider
        if provider not in clients:
            clients[provider] = _deferred(endpoint, settings)
    if not selected.usable or selected.api_key == selected.config.api_key:
        # The key is config.toml's (or missing): `iac-code login` may store one while we run.
        default = clients.get(selected.profile.id) or _deferred(selected, settings)
        renew = StoredKeyWatch(selected, settings)
        clients[selected.profile.id] = LateKeyClient(client=default, renew=renew)
    return RoutingLLMClient(clients=clients, routes=routes, default=selected.profile.id)


def _deferred(endpoint: Endpoint, settings: Settings) -> DeferredLLMClient:
    return DeferredLLMClient(
        factory=lambda: build_client(endpoint, settings), has_credentials=endpoint.usable
    )


class StoredKeyWatch:
    """A client for the selected provider's key once config.toml holds another one than
    the client has. Only the key is taken: the rest of the file is read at the next start."""

    def __init__(self, endpoint: Endpoint, settings: Settings) -> None:
        self._endpoint = endpoint
        self._settings = settings
        self._file = settings.config_dir / "config.toml"
        self._key = endpoint.api_key
        self._looked_at = self._stamp()

    def __call__(self) -> LLMClient | None:
        stamp = self._stamp()
        if stamp == self._looked_at:  # one stat: this runs before every prompt
            return None
        self._looked_at = stamp
        from bootstrap.stored_keys import stored_key  # not on the path to `initialize`

        key = stored_key(self._settings.config_dir, self._endpoint.profile.id)
        if not key or key == self._key:
            return None
        self._key = key
        return _deferred(replace(self._endpoint, api_key=key), self._settings)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self._file.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size


def make_initialize(settings: Settings, version: str) -> Initialize:
    """The `initialize` answer's facts: cheap (no SDK), so it serves before the heavy imports."""
    models = offered(settings)
    default = next((m for _, m in models if m.id == settings.default_model), None)
    return Initialize(
        name="iac-code",
        title="iac-code",
        version=version,
        takes_key=not settings.profile.key_optional,
        provider_name=settings.profile.name,
        key_variable=settings.key_hint,
        key_link=settings.profile.key_link,
        images=default.images if default else True,
    )
