"""`initialize` reads protocolVersion as the schema types it (issue 25, finding 7), before the
agent has loaded and after (the agent's own route: tests/integration/test_initialize_versions)."""

from pathlib import Path

import pytest

from tests.e2e.test_stdio_raw import RawAgent, raw_agent

pytestmark = pytest.mark.e2e

WRONG = ["abc", {}, -5, 1.5, True, 70000, [], "1"]


async def _refused_and_negotiated(raw: RawAgent, first_id: int) -> None:
    for offset, version in enumerate(WRONG):
        reply = await raw.call(first_id + offset, "initialize", {"protocolVersion": version})
        assert "result" not in reply, (version, reply)
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["field"] == "protocolVersion"
    for version in (1, 2, 0, 65535):  # any valid version is answered with ours
        reply = await raw.call(first_id + 100 + version, "initialize", {"protocolVersion": version})
        assert reply["result"]["protocolVersion"] == 1


async def test_finding_7_a_protocol_version_not_a_uint16_is_invalid_params(
    tmp_path: Path, workdir: Path
) -> None:
    async with raw_agent(tmp_path, workdir) as raw:
        await _refused_and_negotiated(raw, 1000)  # answered early, as the agent loads
        new = await raw.call(1, "session/new", {"cwd": str(workdir), "mcpServers": []})
        assert "result" in new  # the agent has loaded
        await _refused_and_negotiated(raw, 2000)
