"""The agent's working knowledge through the real process, the official ACP client and the
real anthropic SDK: system prompt, environment context, AGENTS.md files, /memory, skills."""

import datetime
import platform
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e

SKILL = """---
name: release-notes
description: Write release notes from the git log.
---
Collect the commits since the last tag and group them by area.
Arguments given: $ARGUMENTS
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository whose root holds an AGENTS.md, with the session's cwd one level in."""
    repo = tmp_path / "repo"
    cwd = repo / "service"
    (cwd / "pkg").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "feature/knowledge")
    (repo / "AGENTS.md").write_text("Repository rule: run `make check` before committing.\n")
    (cwd / "AGENTS.md").write_text("Service rule: use type hints everywhere.\n")
    (cwd / "pkg" / "AGENTS.md").write_text("Package rule: no global state in pkg.\n")
    (cwd / "pkg" / "core.py").write_text("STATE = {}\n")
    skill = cwd / ".iac-code" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    return cwd


def user_text(request: Any) -> str:
    return str(request.messages[-1]["content"])


async def start(agent: Agent, cwd: Path) -> str:
    await agent.initialize()
    session = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])
    return session.session_id


async def test_the_model_is_told_its_rules_its_environment_and_the_projects_instructions(
    spawn: Spawn, project: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(
            tool_use("read_file", {"path": "pkg/core.py"}, id="toolu_1"), stop_reason="tool_use"
        ),
        stream(text("Read it.")),
        stream(text("Planned.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, project)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("look at core.py")])
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        await agent.conn.prompt(session_id=sid, prompt=[text_block("plan a change")])
    first, second, third = server.requests
    system = first.system
    assert "edit_file" in system and "read" in system.lower()
    assert "Repository rule: run `make check`" in system
    assert "Service rule: use type hints" in system
    assert system.index("Repository rule") < system.index("Service rule")  # outermost first
    assert "Package rule" not in system
    assert "release-notes" in system and "Write release notes from the git log." in system
    assert "Collect the commits" not in system  # a skill's body is loaded on demand only
    # The environment, with the turn's first request, before the user's words.
    [environment] = first.environment
    assert "feature/knowledge" in environment
    assert datetime.date.today().isoformat() in environment
    assert platform.system() in environment
    assert first.body["messages"][-1]["content"][0]["text"] == environment
    assert "look at core.py" in user_text(first)
    # The subdirectory's AGENTS.md, once the agent read a file there.
    assert "Package rule: no global state in pkg." in str(second.messages[-1]["content"])
    # Plan mode is said, and everything before the mode's section stays byte for byte.
    assert "## Mode: Plan" in third.system and "## Mode: Plan" not in system
    assert third.system.split("## Mode:")[0] == system.split("## Mode:")[0]
    server.assert_script_consumed()


async def test_memory_lists_what_was_loaded_and_a_skill_is_loaded_or_invoked(
    spawn: Spawn, project: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        stream(
            tool_use("load_skill", {"name": "release-notes"}, id="toolu_1"),
            stop_reason="tool_use",
        ),
        stream(text("Loaded.")),
        stream(text("Notes written.")),
    )
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, project)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("/memory")])
        listing = agent.client.agent_text()
        assert str(project / "AGENTS.md") in listing
        assert str(project.parent / "AGENTS.md") in listing
        assert "release-notes" in listing
        await agent.conn.prompt(session_id=sid, prompt=[text_block("write release notes")])
        assert agent.client.permission_requests == []  # load_skill never asks
        loaded = server.requests[1].messages[-1]["content"][0]
        assert "Collect the commits since the last tag" in str(loaded["content"])

        await agent.conn.prompt(session_id=sid, prompt=[text_block("/release-notes v2.0")])
        expanded = user_text(server.requests[2])
        assert "Collect the commits since the last tag" in expanded
        assert "Arguments given: v2.0" in expanded

        # A load replays the user's own words; the session goes on with its instructions.
        agent.client.updates.clear()
        await agent.conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        said = [
            u.content.text
            for _, u in agent.client.updates
            if u.session_update == "user_message_chunk"
        ]
        assert "/release-notes v2.0" in said
        assert not any("Collect the commits" in s for s in said)
    server.assert_script_consumed()


async def test_a_restarted_agent_keeps_the_instructions(
    spawn: Spawn, project: Path, server: ScriptedAnthropic
) -> None:
    server.script(stream(text("One.")), stream(text("Two.")))
    async with spawn(anthropic_env(server)) as agent:
        sid = await start(agent, project)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("first")])
    (project / "AGENTS.md").write_text("Service rule: changed since the last turn.\n")
    async with spawn(anthropic_env(server)) as agent:
        await agent.initialize()
        await agent.conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        await agent.conn.prompt(session_id=sid, prompt=[text_block("second")])
    first, second = server.requests
    assert "Service rule: changed since the last turn." in second.system
    # The first turn's environment is still what the model read then: the prefix is stable.
    assert second.messages[0] == first.messages[0]
    assert second.environment[0] == first.environment[0] and len(second.environment) == 2
    server.assert_script_consumed()
