"""Tracing on or off from the standard OTEL_* variables; off means the no-op tracer and
an unwrapped dispatcher."""

from pathlib import Path
from typing import Any

import pytest

from application.ports.tracing import NO_SPAN, NO_TRACING
from bootstrap.settings import SettingsError, load_settings
from bootstrap.tracing import TracingConfigError, make_tracer, traced, traces_exporters


@pytest.mark.parametrize(
    ("env", "exporters"),
    [
        ({}, ()),
        ({"OTEL_TRACES_EXPORTER": "none"}, ()),
        ({"OTEL_TRACES_EXPORTER": ""}, ()),
        ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
        ({"OTEL_TRACES_EXPORTER": " OTLP , console,otlp"}, ("otlp", "console")),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_TRACES_EXPORTER": "none"}, ()),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, ()),
        ({"OTEL_SERVICE_NAME": "x", "OTEL_RESOURCE_ATTRIBUTES": "a=b"}, ()),
    ],
)
def test_exporters_from_the_environment(env: dict[str, str], exporters: tuple[str, ...]) -> None:
    assert traces_exporters(env) == exporters


@pytest.fixture
def demo(tmp_path: Path) -> dict[str, str]:
    return {"IAC_CODE_PROVIDER": "demo", "IAC_CODE_CONFIG_DIR": str(tmp_path)}


def test_an_unsupported_exporter_is_a_clear_error(demo: dict[str, str]) -> None:
    with pytest.raises(TracingConfigError, match="unsupported exporter zipkin"):
        traces_exporters({"OTEL_TRACES_EXPORTER": "otlp,zipkin"})
    with pytest.raises(SettingsError, match="OTEL_TRACES_EXPORTER"):
        load_settings({**demo, "OTEL_TRACES_EXPORTER": "jaeger"})


def test_settings_carry_the_exporters(demo: dict[str, str]) -> None:
    assert load_settings({**demo, "OTEL_TRACES_EXPORTER": "console"}).traces_exporters == (
        "console",
    )
    assert load_settings(demo).traces_exporters == ()


def test_off_is_the_no_op_tracer_and_the_dispatcher_itself() -> None:
    dispatcher: Any = object()
    assert traced(dispatcher, ()) is dispatcher
    assert make_tracer(()) is NO_TRACING
    with NO_TRACING.span("turn", {"session.id": "s"}) as span:
        span.set("acp.stop_reason", "end_turn")
    assert span is NO_SPAN
