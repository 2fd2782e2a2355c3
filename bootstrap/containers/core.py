"""What every other container reads: the settings, the process's clock, ids and running
sessions, the model catalogue, the tracer."""

import operator

from dependency_injector import containers, providers

from adapters.clock import SystemClock
from adapters.ids import UuidIds
from application.runtime.registry import SessionRegistry
from bootstrap.confinement import build_confinement
from bootstrap.offered_models import build_catalog
from bootstrap.settings import Settings
from bootstrap.tracing import make_tracer


class Core(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    version = providers.Object("0.0.0")

    clock = providers.Singleton(SystemClock)
    now = providers.Callable(operator.attrgetter("now"), clock)
    ids = providers.Singleton(UuidIds)
    registry = providers.Singleton(SessionRegistry)
    catalog = providers.Singleton(build_catalog, settings)
    # How the agent's commands are confined (bubblewrap, seccomp, limits).
    confinement = providers.Singleton(build_confinement, settings)
    # OpenTelemetry when OTEL_* variables configure an exporter; else the no-op tracer.
    tracer = providers.Singleton(make_tracer, settings.provided.traces_exporters)
