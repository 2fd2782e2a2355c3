"""The models a session may use, by provider, and the `initialize` answer's facts: light
modules only (no model client, no port), so they serve on the path to `initialize`."""

from adapters.llm.catalogue import catalogue
from adapters.llm.providers import Adapter
from application.handshake.initialize import Initialize
from bootstrap.provider_settings import Endpoint, ProviderConfig
from bootstrap.sandbox import likely_engine, sandbox_rules
from bootstrap.settings import Settings
from domain.config import Catalog
from domain.models import ModelInfo
from domain.modes import offered_modes


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
        sandbox=sandbox_rules(settings, engine=likely_engine(settings)),
    )


def build_catalog(settings: Settings) -> Catalog:
    """The modes, models and defaults every session is offered (the agent's, and the
    early `session/new`'s: bootstrap/early.py)."""
    return Catalog(
        modes=offered_modes(allow_bypass=settings.allow_bypass),
        models=tuple(model for _, model in offered(settings)),
        default_mode=settings.default_mode,
        default_thought_level=settings.thought_level,
        sandbox=sandbox_rules(settings, engine=likely_engine(settings)),
    )
