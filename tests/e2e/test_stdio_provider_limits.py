"""Provider limits and outages through the real process and the real SDKs: a scripted model
answers 429 with `retry-after: 2`, the turn waits and asks again, each wait told as a
`notice` (a shape newer than the pinned SDK, so the client here speaks raw frames, each one
validated against the newest schema file), and `session/cancel` ends a wait at once.
Without `session.notices` the official client reads the same waits as agent text."""

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import Spawn, anthropic_env
from tests.support import scripted_openai
from tests.support.raw_acp import NOTICES, raw_client
from tests.support.scripted_anthropic import ScriptedAnthropic, rate_limited, stream, text
from tests.support.scripted_openai import ScriptedOpenAI

pytestmark = pytest.mark.e2e


def limited_for(seconds: int) -> Any:
    """A 429 asking for `seconds` in `retry-after` (as the real API sends it)."""
    return rate_limited(retry_after_ms=None, headers={"retry-after": str(seconds)})


def countdown(notice: dict[str, Any]) -> dict[str, Any]:
    retry: dict[str, Any] = notice["_meta"]["iac_code"]["retry"]
    return retry


@pytest.fixture
def env(tmp_path: Path, server: ScriptedAnthropic) -> dict[str, str]:
    return {
        "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
        **anthropic_env(server, IAC_CODE_MAX_RETRIES="4"),
    }


async def test_two_rate_limits_then_the_reply_two_countdown_notices(
    env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(limited_for(2), limited_for(2), stream(text("Made ", "it.")))
    async with raw_client(env, workdir) as client:
        sid = await client.open(workdir, NOTICES)
        answer = await client.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )
        live = client.updates()
        # Notices are not history: a load replays the turn without them.
        before_load = len(client.received)
        loaded = await client.call(
            "session/load", {"sessionId": sid, "cwd": str(workdir), "mcpServers": []}
        )
        replay = [
            m["params"]["update"]
            for m in client.received[before_load:]
            if m.get("method") == "session/update"
        ]

    assert "result" in loaded, loaded
    assert all(u["sessionUpdate"] != "notice" for u in replay)
    assert any(
        u["sessionUpdate"] == "agent_message_chunk" and u["content"]["text"] == "Made it."
        for u in replay
    )
    assert answer["result"]["stopReason"] == "end_turn"
    told = client.notices()
    assert [n["severity"] for n in told] == ["warning", "warning"]
    assert [countdown(n)["secondsLeft"] for n in told] == [2, 2]
    assert [countdown(n)["attempt"] for n in told] == [2, 3]
    assert {countdown(n)["status"] for n in told} == {429}
    assert all("retrying in 2 s" in n["title"] for n in told)
    kinds = [u["sessionUpdate"] for u in live]
    assert kinds.index("agent_message_chunk") > max(i for i, k in enumerate(kinds) if k == "notice")
    chunks = [u for u in live if u["sessionUpdate"] == "agent_message_chunk"]
    text_shown = "".join(u["content"]["text"] for u in chunks)
    assert text_shown == "Made it."  # the waits are notices, not text, for this client
    assert [r.headers.get("x-stainless-retry-count") for r in server.requests] == ["0", "1", "2"]
    server.assert_script_consumed()


async def test_cancel_during_the_wait_ends_the_turn_cancelled_at_once(
    env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(limited_for(60))  # nothing follows: a second request would be unscripted
    async with raw_client(env, workdir) as client:
        sid = await client.open(workdir, NOTICES)
        prompt = await client.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )
        while not client.notices():
            message = await client.next_message()
            assert message.get("id") != prompt, message  # not answered before the wait
        await client.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
        )
        answer = await client.answer_to(prompt)

    assert answer["result"]["stopReason"] == "cancelled"
    [notice] = client.notices()
    assert countdown(notice)["secondsLeft"] == 60
    assert len(server.requests) == 1
    server.assert_script_consumed()


async def test_without_notices_the_official_client_reads_the_wait_as_text(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(limited_for(2), stream(text("Done.")))
    async with spawn(anthropic_env(server, IAC_CODE_MAX_RETRIES="4")) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert result.stop_reason == "end_turn"
    shown = agent.client.agent_text()
    assert "[Rate limited by the provider: retrying in 2 s (attempt 2 of 5)]" in shown
    assert shown.endswith("Done.")
    sent = agent.sent_by_agent("session/update")
    assert all(m["params"]["update"]["sessionUpdate"] != "notice" for m in sent)
    server.assert_script_consumed()


async def test_a_usage_limit_past_the_budget_ends_the_turn_saying_when(
    env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(limited_for(3600))
    async with raw_client(env, workdir) as client:
        sid = await client.open(workdir, NOTICES)
        answer = await client.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )

    error = answer["error"]
    assert error["data"]["kind"] == "usage_limit"
    assert error["data"]["retryAfter"] == 3600
    assert "try again after" in error["message"]
    [notice] = client.notices()
    assert notice["severity"] == "error"
    assert notice["title"].startswith("Usage limit reached: try again after ")
    assert notice["_meta"]["iac_code"]["providerError"]["retryAt"] == error["data"]["retryAt"]
    assert len(server.requests) == 1


async def test_the_openai_compatible_provider_waits_alike(tmp_path: Path, workdir: Path) -> None:
    def limited() -> Any:
        return scripted_openai.rate_limited(retry_after=2)

    with ScriptedOpenAI() as chat:
        chat.script(limited(), limited(), scripted_openai.stream(scripted_openai.text("Fine.")))
        env = {
            "IAC_CODE_CONFIG_DIR": str(tmp_path / "config"),
            "IAC_CODE_PROVIDER": "OpenAI-Compatible",
            "IAC_CODE_BASE_URL": chat.base_url,
            "IAC_CODE_MODEL": "qwen2.5-coder:7b",
        }
        async with raw_client(env, workdir) as client:
            sid = await client.open(workdir, NOTICES)
            answer = await client.call(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
            )
        chat.assert_script_consumed()

    assert answer["result"]["stopReason"] == "end_turn"
    told = client.notices()
    assert [countdown(n)["secondsLeft"] for n in told] == [2, 2]
    assert [countdown(n)["attempt"] for n in told] == [2, 3]


async def test_a_client_back_with_a_cursor_gets_the_missed_notices_shaped_for_it(
    env: dict[str, str], workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(limited_for(2), stream(text("Back.")))
    async with raw_client(env, workdir) as first:
        sid = await first.open(workdir, NOTICES)
        await first.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )
    missed: dict[str, list[dict[str, Any]]] = {}
    for name, capabilities in (("notices", NOTICES), ("plain", {})):
        async with raw_client(env, workdir) as again:  # a new process: from the journal
            await again.call(
                "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
            )
            loaded = await again.call(
                "session/load",
                {
                    "sessionId": sid,
                    "cwd": str(workdir),
                    "mcpServers": [],
                    "_meta": {"iac_code": {"after": 0}},
                },
            )
            assert "result" in loaded, loaded
            missed[name] = again.updates()

    [notice] = [u for u in missed["notices"] if u["sessionUpdate"] == "notice"]
    assert countdown(notice)["secondsLeft"] == 2
    plain_text = "".join(
        u["content"]["text"] for u in missed["plain"] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert all(u["sessionUpdate"] != "notice" for u in missed["plain"])
    assert "[Rate limited by the provider: retrying in 2 s (attempt 2 of 5)]" in plain_text
    assert plain_text.endswith("Back.")
