"""A provider URL nothing answers at: each attempt is told on stderr and the error names the
URL, through the real process and the real SDK clients (issue 25, finding 11)."""

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Spawn

pytestmark = pytest.mark.e2e


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound, never listening, so no other
    process can take it while the test runs."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


PROVIDERS = {
    "openai_compatible": {"IAC_CODE_PROVIDER": "openai_compatible", "IAC_CODE_MODEL": "local"},
    "anthropic": {
        "IAC_CODE_PROVIDER": "anthropic",
        "IAC_CODE_API_KEY": "sk-test-secret",
        "IAC_CODE_MODEL": "claude-test",
    },
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_finding_11_an_unreachable_provider_is_named_and_each_attempt_told(
    spawn: Spawn, workdir: Path, closed_port: int, provider: str
) -> None:
    env = {
        **PROVIDERS[provider],
        "IAC_CODE_BASE_URL": f"http://someone:hunter2@127.0.0.1:{closed_port}/v1",
        "IAC_CODE_MAX_RETRIES": "2",  # three attempts, the SDK's short first backoffs
    }
    async with spawn(env) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        with pytest.raises(RequestError) as caught:
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        stderr = agent.stderr()
    data = caught.value.data
    assert data["kind"] == "unavailable"
    assert data["url"].startswith(f"http://127.0.0.1:{closed_port}/v1/")
    assert data["attempts"] == 3
    told = [line for line in stderr.splitlines() if "model provider: attempt" in line]
    assert [line.split("attempt ")[1].split(" to ")[0] for line in told] == [
        "1 of 3",
        "2 of 3",
        "3 of 3",
    ], stderr
    for line in told:
        assert "WARNING" in line
        assert data["url"] in line
        assert "ConnectError" in line  # the reason
    for secret in ("hunter2", "someone", "sk-test-secret"):
        assert secret not in stderr
        assert secret not in str(data)
