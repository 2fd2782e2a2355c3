"""Extra directories (`additionalDirectories`) through the real process and official client."""

from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e


def reads(path: Path, call_id: str) -> bytes:
    return stream(tool_use("read_file", {"path": str(path)}, id=call_id), stop_reason="tool_use")


def result_text(server: ScriptedAnthropic, request: int) -> str:
    [result] = [b for b in server.requests[request].messages[-1]["content"]]
    return str(result["content"])


async def started(agent: Agent) -> None:
    init = await agent.initialize()
    assert init.agent_capabilities.session_capabilities.additional_directories is not None


async def test_a_read_in_an_extra_directory_runs_without_asking(
    spawn: Spawn, workdir: Path, tmp_path: Path, server: ScriptedAnthropic
) -> None:
    extra = tmp_path / "shared-lib"
    extra.mkdir()
    (extra / "notes.txt").write_text("notes from the shared library\n")
    server.script(
        reads(extra / "notes.txt", "toolu_1"),
        stream(text("Read it.")),
        reads(extra / "notes.txt", "toolu_2"),
        stream(text("Asked.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        await started(agent)
        session = await agent.conn.new_session(
            cwd=str(workdir), mcp_servers=[], additional_directories=[str(extra)]
        )
        sid = session.session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("read the notes")])
        assert agent.client.permission_requests == []
        assert "notes from the shared library" in result_text(server, 1)
        listed = await agent.conn.list_sessions(cwd=str(workdir))
        assert listed.sessions[0].additional_directories == [str(extra)]

        # Opened again without it, the directory is outside the session: reading asks.
        await agent.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        agent.client.answers = ["reject_once"]
        await agent.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert len(agent.client.permission_requests) == 1
        assert result_text(server, 3) == "Permission denied."
    server.assert_script_consumed()


async def test_a_bad_extra_directory_is_refused_by_name(
    spawn: Spawn, workdir: Path, tmp_path: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await started(agent)
        for entry, reason in (("relative/dir", "not absolute"), ("/no/such", "no such directory")):
            with pytest.raises(RequestError) as caught:
                await agent.conn.new_session(
                    cwd=str(workdir), mcp_servers=[], additional_directories=[str(tmp_path), entry]
                )
            assert caught.value.code == -32602
            assert caught.value.data == {
                "field": "additionalDirectories[1]",
                "path": entry,
                "reason": reason,
            }
        # Nothing was created, and the agent still serves.
        assert (await agent.conn.list_sessions()).sessions == []
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert session.session_id
