"""The client that serves each model a session may use (bootstrap/offered_models.py: which
they are), built from the provider profiles, so no other module names a provider."""

from dataclasses import replace

from adapters.llm.deferred import DeferredLLMClient
from adapters.llm.demo import DemoLLMClient
from adapters.llm.late_key import LateKeyClient
from adapters.llm.providers import Adapter
from adapters.llm.routing import RoutingLLMClient
from application.ports.llm import LLMClient
from bootstrap.offered_models import offered, selected_endpoint
from bootstrap.provider_settings import Endpoint
from bootstrap.settings import Settings


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
