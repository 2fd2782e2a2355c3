"""The `/rewind` slash command: the real process, the official client, a scripted Messages
API. Its own prompt and answer are not stored, so it neither lists itself nor blocks its own
undo; the undo it offers survives a kill -9. Every message of each run is validated against
the newest (unstable) schema file."""

from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env
from tests.e2e.test_stdio_rewind import (
    prompt,
    prompt_id,
    rewind_updates,
    said,
    transcript,
    valid_on_the_wire,
)
from tests.support.scripted_anthropic import ScriptedAnthropic

pytestmark = pytest.mark.e2e


async def slash(agent: Agent, sid: str, words: str) -> str:
    """The answer the command shows (it asks the model nothing)."""
    before = len(agent.client.agent_text())
    result = await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
    assert result.stop_reason == "end_turn"
    return agent.client.agent_text()[before:]


async def test_rewind_lists_rewinds_to_the_nth_prompt_and_undoes_after_a_kill(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    env = anthropic_env(server)
    async with spawn(env) as first:
        await first.initialize()
        sid = (await first.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        for words in ("one", "two", "three"):
            await prompt(first, server, sid, words)
        shown = await transcript(first, sid, workdir)
        ids = {words: prompt_id(shown, words) for words in ("one", "two", "three")}

        listed = await slash(first, sid, "/rewind")
        assert listed.splitlines()[1:] == [
            f"1. “three” (id {ids['three']})",
            f"2. “two” (id {ids['two']})",
            f"3. “one” (id {ids['one']})",
        ]
        assert await transcript(first, sid, workdir) == shown  # the listing is not stored

        assert "no prompt 4" in await slash(first, sid, "/rewind 4")
        assert (await slash(first, sid, "/rewind 2 sideways")).startswith("Usage:")
        assert "no rewind to undo" in await slash(first, sid, "/rewind undo")

        answer = await slash(first, sid, "/rewind 2")
        assert answer.startswith("Rewound to before “two”: 2 messages remain.")
        assert rewind_updates(first) == [
            {"rewound": {"toMessageId": ids["two"], "messageCount": 2}}
        ]
        assert [s for *_, s in await transcript(first, sid, workdir)] == ["one", "re: one"]
        first.kill()  # the undo is stored with the cut
    valid_on_the_wire(first)

    async with spawn(env) as second:
        await second.initialize()
        assert [s for *_, s in await transcript(second, sid, workdir)] == ["one", "re: one"]
        undone = await slash(second, sid, "/rewind undo")
        assert "undone" in undone and "6 messages" in undone
        assert rewind_updates(second)[-1] == {
            "rewindUndone": {"toMessageId": ids["two"], "messageCount": 6}
        }
        assert await transcript(second, sid, workdir) == shown
        assert "no rewind to undo" in await slash(second, sid, "/rewind undo")

        await slash(second, sid, "/rewind 1")
        await prompt(second, server, sid, "three, said again")
        assert said(server.requests[-1].messages) == [
            "one",
            "re: one",
            "two",
            "re: two",
            "three, said again",
        ]
        refused = await slash(second, sid, "/rewind undo")  # prompted since: spent
        assert refused.startswith("Nothing was done:") and "prompted since" in refused
    valid_on_the_wire(second)
