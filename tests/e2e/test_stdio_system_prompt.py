"""The client's system prompt (ACP `systemPrompt`, schema.unstable.json of
@agentclientprotocol/sdk 2.4.0): the real process, the real anthropic SDK, a scripted
Messages API. The pinned Python SDK has no such field, so the opening requests are sent as
raw params; every message each run carried is validated against the unstable schema."""

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text

pytestmark = pytest.mark.e2e

OURS = "You are iac-code"
APPEND = {"mode": "append", "content": [{"type": "text", "text": "Always answer in haiku."}]}
OVERRIDE = {
    "mode": "override",
    "content": [
        {"type": "text", "text": "You are Terraform Reviewer."},
        {"type": "text", "text": "Only review .tf files."},
    ],
}


def valid_on_the_wire(agent: Agent) -> None:
    """Every message of the run, both ways, against the newest (unstable) schema file."""
    validator = SchemaFileValidator(which="unstable")
    for sender, message in agent.raw:
        validator.check(sender, message)
    validator.assert_clean()


async def opened(agent: Agent, method: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await agent.conn._conn.send_request(
        method, {"mcpServers": [], **params}
    )
    return result


async def system_of_next_turn(agent: Agent, server: ScriptedAnthropic, session_id: str) -> str:
    """The system prompt the model is sent for a prompt on `session_id`."""
    server.script(stream(text("ok"), input_tokens=5, output_tokens=1))
    before = len(server.requests)
    await agent.conn.prompt(session_id=session_id, prompt=[text_block("hi")])
    return server.requests[before].system


async def test_the_capability_is_advertised_as_the_schema_says(
    spawn: Spawn, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
    [answer] = [m for s, m in agent.raw if s == "agent" and m.get("id") == 0]
    capabilities = answer["result"]["agentCapabilities"]["sessionCapabilities"]
    assert capabilities["systemPrompt"] == {"mode": {"override": {}}}
    valid_on_the_wire(agent)


async def test_appended_text_reaches_the_model_and_survives_kill_restart_load_resume_and_fork(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    (workdir / "AGENTS.md").write_text("Run `make check`.\n")
    env = anthropic_env(server)
    async with spawn(env) as first:
        await first.initialize()
        sid = (await opened(first, "session/new", cwd=str(workdir), systemPrompt=APPEND))[
            "sessionId"
        ]
        system = await system_of_next_turn(first, server, sid)
        first.kill()
    assert system.startswith(OURS)
    assert system.index("Run `make check`.") < system.index("Always answer in haiku.")
    assert system.endswith("Always answer in haiku.")
    valid_on_the_wire(first)

    async with spawn(env) as second:  # a load that gives no system prompt keeps it
        await second.initialize()
        await opened(second, "session/load", cwd=str(workdir), sessionId=sid)
        assert (await system_of_next_turn(second, server, sid)) == system
        fork = (await opened(second, "session/fork", cwd=str(workdir), sessionId=sid))["sessionId"]
        assert (await system_of_next_turn(second, server, fork)) == system
    valid_on_the_wire(second)

    async with spawn(env) as third:  # after another restart, resume: still there
        await third.initialize()
        await opened(third, "session/resume", cwd=str(workdir), sessionId=fork)
        assert (await system_of_next_turn(third, server, fork)) == system
    valid_on_the_wire(third)
    server.assert_script_consumed()


async def test_override_replaces_our_instructions_and_a_later_open_may_replace_it(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        sid = (await opened(agent, "session/new", cwd=str(workdir), systemPrompt=OVERRIDE))[
            "sessionId"
        ]
        overridden = await system_of_next_turn(agent, server, sid)
        await opened(agent, "session/resume", cwd=str(workdir), sessionId=sid, systemPrompt=APPEND)
        appended = await system_of_next_turn(agent, server, sid)
    assert overridden.startswith("You are Terraform Reviewer.\n\nOnly review .tf files.")
    assert OURS not in overridden and "## Working rules" not in overridden
    assert "## Safety" in overridden and f"`{workdir}`" in overridden  # kept: safety, cwd
    assert appended.startswith(OURS) and appended.endswith("Always answer in haiku.")
    valid_on_the_wire(agent)
    server.assert_script_consumed()


@pytest.mark.parametrize(
    ("prompt", "field"),
    [
        ({"mode": "replace", "content": [{"type": "text", "text": "x"}]}, "systemPrompt.mode"),
        ({"mode": "append", "content": []}, "systemPrompt.content"),
        (
            {
                "mode": "append",
                "content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}],
            },
            "systemPrompt.content[0]",
        ),
    ],
)
async def test_a_prompt_that_cannot_be_used_opens_nothing_and_changes_nothing(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, prompt: Any, field: str
) -> None:
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        with pytest.raises(RequestError) as refused_new:
            await opened(agent, "session/new", cwd=str(workdir), systemPrompt=prompt)
        assert (await agent.conn.list_sessions(cwd=str(workdir))).sessions == []
        sid = (await opened(agent, "session/new", cwd=str(workdir), systemPrompt=APPEND))[
            "sessionId"
        ]
        for method in ("session/load", "session/resume", "session/fork"):
            with pytest.raises(RequestError) as refused:
                await opened(agent, method, cwd=str(workdir), sessionId=sid, systemPrompt=prompt)
            assert (refused.value.code, refused.value.data["field"]) == (-32602, field), method
        assert len((await agent.conn.list_sessions(cwd=str(workdir))).sessions) == 1  # no fork
        system = await system_of_next_turn(agent, server, sid)
    assert (refused_new.value.code, refused_new.value.data["field"]) == (-32602, field)
    assert system.endswith("Always answer in haiku.")  # the stored prompt is untouched
    valid_on_the_wire(agent)  # the refused requests too: the schema allows what we refuse
    server.assert_script_consumed()
