"""What every other container reads: the settings, the process's clock, ids and running
sessions, the model catalogue, the tracer."""

import operator

from dependency_injector import containers, providers

from adapters.clock import SystemClock
from adapters.ids import UuidIds
from application.runtime import SessionRegistry
from bootstrap.offered_models import offered
from bootstrap.settings import Settings
from bootstrap.tracing import make_tracer
from domain.config import Catalog
from domain.modes import offered_modes


def build_catalog(settings: Settings) -> Catalog:
    return Catalog(
        modes=offered_modes(allow_bypass=settings.allow_bypass),
        models=tuple(model for _, model in offered(settings)),
        default_mode=settings.default_mode,
        default_thought_level=settings.thought_level,
    )


class Core(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    version = providers.Object("0.0.0")

    clock = providers.Singleton(SystemClock)
    now = providers.Callable(operator.attrgetter("now"), clock)
    ids = providers.Singleton(UuidIds)
    registry = providers.Singleton(SessionRegistry)
    catalog = providers.Singleton(build_catalog, settings)
    # OpenTelemetry when OTEL_* variables configure an exporter; else the no-op tracer.
    tracer = providers.Singleton(make_tracer, settings.provided.traces_exporters)
