"""The client's system prompt over HTTP+SSE with the official client: the transport carries
`systemPrompt` (which the pinned SDK does not know) like any other param, and every
message is valid under the newest (unstable) schema file."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import RecordingClient
from tests.http.test_agent_over_http import agent_server, anthropic_settings, sdk_client
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text
from tests.support.wire_validator import WireValidator

pytestmark = pytest.mark.integration


@dataclass
class BothSchemas(WireValidator):
    """The SDK's closed schemas, and the newest schema file beside them."""

    newest: SchemaFileValidator = field(default_factory=lambda: SchemaFileValidator("unstable"))

    def check(self, sender: str, message: Any) -> None:
        super().check(sender, message)
        self.newest.check(sender, message)


async def test_an_override_given_over_http_is_what_the_model_is_told(
    tmp_path: Path, workdir: Path
) -> None:
    wire = BothSchemas()
    override = {"mode": "override", "content": [{"type": "text", "text": "You lint YAML."}]}
    with ScriptedAnthropic(stream(text("ok"))) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk_client(base, wire, RecordingClient()) as (conn, _),
        ):
            params = {"cwd": str(workdir), "mcpServers": [], "systemPrompt": override}
            session = await conn._conn.send_request("session/new", params)
            await conn.prompt(session_id=session["sessionId"], prompt=[text_block("lint")])
        model.assert_script_consumed()
    system = model.requests[0].system
    assert system.startswith("You lint YAML.\n\n## Safety")
    assert "You are iac-code" not in system
    wire.assert_clean()
    wire.newest.assert_clean()
