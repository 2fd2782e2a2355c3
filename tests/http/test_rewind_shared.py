"""A rewind of a session two official clients share, one on HTTP+SSE and one on a
WebSocket: both are told (`session_info_update` with `_meta.iac_code.rewound`), and the
undo's replay reaches both. Every message is schema-checked."""

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.http.test_agent_over_http import anthropic_settings
from tests.http.test_shared_sessions import Follower, both_transports, role, sdk, sdk_ws
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text

pytestmark = pytest.mark.integration


def told(client: Follower) -> list[dict[str, Any]]:
    """The rewinds and undos `client` was told, as their `_meta.iac_code`."""
    metas = [
        m["params"]["update"].get("_meta", {}).get("iac_code", {})
        for m in client.incoming("session/update")
        if m["params"]["update"]["sessionUpdate"] == "session_info_update"
    ]
    return [m for m in metas if "rewound" in m or "rewindUndone" in m]


async def test_both_clients_see_the_rewind_and_its_undo(tmp_path: Path, workdir: Path) -> None:
    a, b = Follower(), Follower()
    with ScriptedAnthropic(stream(text("re: one")), stream(text("re: two"))) as model:
        async with (
            both_transports(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as over_sse,
            sdk_ws(base, b) as over_ws,
        ):
            sid = (await over_sse.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            for words in ("one", "two"):
                await over_sse.prompt(session_id=sid, prompt=[text_block(words)])
            loaded = await over_ws.load_session(cwd=str(workdir), session_id=sid)
            assert role(loaded) == "observer"
            second = next(
                u.message_id
                for _, u in b.updates
                if u.session_update == "user_message_chunk" and u.content.text == "two"
            )
            rewound = await over_sse._conn.send_request(
                "_iac_code/session/rewind", {"sessionId": sid, "toMessageId": second}
            )
            expected = {"rewound": {"toMessageId": second, "messageCount": 2}}
            await a.until(lambda: told(a) == [expected])
            await b.until(lambda: told(b) == [expected])
            shown = len(b.updates)
            await over_sse._conn.send_request(
                "_iac_code/session/rewind_undo",
                {"sessionId": sid, "undoToken": rewound["undoToken"]},
            )
            await b.until(lambda: b.agent_text().endswith("re: two"))
            await a.until(lambda: len(told(a)) == 2)
        model.assert_script_consumed()
    back = {"rewindUndone": {"toMessageId": second, "messageCount": 4}}
    assert told(a)[-1] == told(b)[-1] == back
    assert [u.session_update for _, u in b.updates[shown:]] == [
        "session_info_update",
        "user_message_chunk",
        "agent_message_chunk",
    ]
    a.wire.assert_clean()
    b.wire.assert_clean()
