"""With no OTEL_* variables a whole prompt turn runs, through the container and the
dispatcher the transports get, without the OpenTelemetry SDK or our tracing adapter ever
being imported, and with no tracer provider installed. (The OpenTelemetry *API* is loaded
anyway: FastAPI imports it for its own telemetry, whose spans are no-ops without a
provider.)"""

import os
from pathlib import Path

import pytest

from tests.support.fresh_interpreter import run_python

pytestmark = pytest.mark.integration

SCRIPT = """
import asyncio, json, sys
from adapters.persistence.migrate import upgrade_to_head
from adapters.protocol.connection import Connection
from bootstrap.container import Container, release
from bootstrap.environment import environment
from bootstrap.settings import load_settings
from bootstrap.tracing import traced

async def main():
    settings = load_settings(environment())
    assert settings.traces_exporters == ()
    upgrade_to_head(settings.database_url)
    container = Container(settings=settings, version="test")
    answers = {}
    async def send(message):
        if "id" in message and "method" not in message:
            answers[message["id"]].set_result(message)
    connection = Connection(send, traced(container.agent(), settings.traces_exporters))
    async def call(request_id, method, params):
        answers[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await connection.receive(json.dumps(message))
        return await asyncio.wait_for(answers[request_id], 30)
    new = await call(1, "session/new", {"cwd": sys.argv[1], "mcpServers": []})
    sid = new["result"]["sessionId"]
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "list files"}], "_meta": meta}
    answer = await call(2, "session/prompt", prompt)
    assert answer["result"]["stopReason"] == "end_turn", answer
    await connection.close()
    await release(container)

asyncio.run(main())
from opentelemetry import trace
assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"  # none installed
traced_modules = ("opentelemetry.sdk", "opentelemetry.exporter", "adapters.tracing")
loaded = sorted(m for m in sys.modules if m.startswith(traced_modules))
print(json.dumps(loaded))
"""


def test_no_opentelemetry_module_is_imported_when_tracing_is_off(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env |= {
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DEMO_PACE": "0",
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
    }
    done = run_python(SCRIPT, str(cwd), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
