"""A named sub-agent that writes asks through its parent's permission flow, over the real
HTTP+SSE and WebSocket transports with two official SDK clients attached to the parent: the
request names the child, the first answer wins and the other copy is withdrawn; a
rejection reaches the child's model as a tool error. Every message is schema-checked."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.http.test_agent_over_http import anthropic_settings
from tests.http.test_shared_sessions import (
    DEADLINE,
    Follower,
    both_transports,
    role,
    sdk,
    sdk_ws,
)
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.integration

WRITER = (
    "---\ndescription: Writes files it is asked to\ntools: [read_file, write_file]\n---\n"
    "You write the files you are asked to.\n"
)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    (path / ".iac-code" / "agents").mkdir(parents=True)
    (path / ".iac-code" / "agents" / "writer.md").write_text(WRITER)
    return path


def child_requests(client: Follower) -> list[dict[str, Any]]:
    return [
        m
        for m in client.incoming("session/request_permission")
        if "childSessionId" in ((m["params"].get("_meta") or {}).get("iac_code") or {})
    ]


async def test_a_childs_write_is_asked_of_both_clients_and_the_first_answer_wins(
    tmp_path: Path, workdir: Path
) -> None:
    start = tool_use("agent", {"prompt": "Write both", "agent": "writer"}, id="toolu_agent")
    script = (
        stream(start, stop_reason="tool_use"),
        stream(
            tool_use("write_file", {"path": "a.txt", "content": "yes"}, id="toolu_c1"),
            stop_reason="tool_use",
        ),
        stream(
            tool_use("write_file", {"path": "b.txt", "content": "no"}, id="toolu_c2"),
            stop_reason="tool_use",
        ),
        stream(text("Wrote a.txt; b.txt was refused.")),
        stream(text("The writer is done.")),
    )
    # a never answers (a user who walked away); b allows starting the agent and the first
    # write, and rejects the second.
    a, b = Follower(hold=True), Follower(answers=["allow_once", "allow_once", "reject_once"])
    with ScriptedAnthropic(*script) as model:
        async with (
            both_transports(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as over_sse,
            sdk_ws(base, b) as over_ws,
        ):
            sid = (await over_sse.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            assert role(await over_ws.load_session(cwd=str(workdir), session_id=sid)) == (
                "observer"
            )
            answer = await asyncio.wait_for(
                over_sse.prompt(session_id=sid, prompt=[text_block("write")]), DEADLINE
            )
            assert answer.stop_reason == "end_turn"
            await a.until(lambda: len(a.incoming("$/cancel_request")) == 3)
        model.assert_script_consumed()

    assert (workdir / "a.txt").read_text() == "yes"
    assert not (workdir / "b.txt").exists()
    # The child's model got the rejection as a tool error.
    [refused] = [
        block
        for block in model.requests[3].messages[-1]["content"]
        if block.get("type") == "tool_result"
    ]
    assert refused["tool_use_id"] == "toolu_c2" and refused.get("is_error") is True
    # Each of the child's requests went to both clients, on the parent, naming the child.
    for client in (a, b):
        asked = child_requests(client)
        assert [m["params"]["toolCall"]["toolCallId"] for m in asked] == ["toolu_c1", "toolu_c2"]
        for message in asked:
            assert message["params"]["sessionId"] == sid
            ours = message["params"]["_meta"]["iac_code"]
            assert ours["agent"] == "writer" and ours["childSessionId"] != sid
    # b answered first each time: a's copies were withdrawn, b's were not.
    withdrawn = [m["params"]["requestId"] for m in a.incoming("$/cancel_request")]
    assert withdrawn == [m["id"] for m in a.incoming("session/request_permission")]
    assert b.incoming("$/cancel_request") == []
    a.wire.assert_clean(allow_unanswered=True)  # a held its copies: they stay unanswered
    b.wire.assert_clean()
