"""The page and an editor (the official Python SDK over the WebSocket) attached to one
session see each other's turns; a server restart in the middle of a turn, after which the
page reconnects by itself and shows what a fresh load shows."""

import json
from pathlib import Path
from typing import Any

from acp import text_block
from playwright.async_api import Page, expect
from websockets.asyncio.client import connect

from tests.browser.conftest import (
    BROWSER_TESTS,
    TOKEN,
    Server,
    conversation,
    send,
    serving,
    signed_in,
    start_session,
)
from tests.e2e.conftest import RecordingClient
from tests.http.conftest import INITIALIZE
from tests.support.official_ws import official_on_websocket, ws_url

pytestmark = BROWSER_TESTS


async def test_the_page_and_an_editor_on_one_session_see_each_others_turns(
    page: Page, server: Server, workdir: Path
) -> None:
    await signed_in(page, server)
    await start_session(page, workdir)
    await send(page, "first from the page")
    await expect(conversation(page)).to_contain_text("You said: first from the page")
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()  # its turn ended
    session_id = await page.evaluate("window.iacCode.view.sessionId")
    recorder = RecordingClient()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with official_on_websocket(
        ws_url(server.base), recorder, name="editor", headers=headers
    ) as (editor, _):
        await editor.load_session(cwd=str(workdir), session_id=session_id, mcp_servers=[])
        await editor.prompt(session_id=session_id, prompt=[text_block("hello from the editor")])
        await expect(conversation(page)).to_contain_text("hello from the editor")
        await expect(conversation(page)).to_contain_text("You said: hello from the editor")
        await send(page, "second from the page")
        await expect(conversation(page)).to_contain_text("You said: second from the page")
        await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()
        # Both are asked; the editor answers first: the page's copy is withdrawn.
        recorder.answers.append("allow_once")
        await editor.prompt(session_id=session_id, prompt=[text_block("create b.txt with hi")])
        await expect(conversation(page).get_by_label("Tool call: Write b.txt")).to_contain_text(
            "completed"
        )  # the page's copy of the request came before this, on the same socket
        await expect(page.get_by_role("dialog")).to_have_count(0)
    assert "You said: first from the page" in recorder.agent_text()  # the load's replay
    assert "You said: second from the page" in recorder.agent_text()  # live
    assert (workdir / "b.txt").read_text() == "hi"


async def newest_journaled(server: Server, session_id: str, cwd: Path, after: int) -> Any:
    """The error of a `session/load` whose cursor is one past `after`: `cursor_ahead`, with
    the newest update the journal holds, when the page has everything."""
    url = ws_url(server.base)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with connect(url, additional_headers=headers) as socket:
        await socket.send(json.dumps(INITIALIZE))
        await socket.recv()
        params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        params["_meta"] = {"iac_code": {"after": after + 1}}
        await socket.send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": params})
        )
        while (message := json.loads(await socket.recv())).get("id") != 1:
            pass
    return message["error"]


async def test_a_restart_mid_turn_is_recovered_with_nothing_lost(
    page: Page, tmp_path: Path, workdir: Path
) -> None:
    with serving(tmp_path, IAC_CODE_DEMO_PACE="30") as server:
        await signed_in(page, server)
        await start_session(page, workdir)
        await send(page, "tell me a long story")
        reply = conversation(page).locator("article.agent")
        await expect(reply).to_contain_text("You said")  # the turn is under way
        before = await reply.text_content()
        server.stop()
        await expect(page.get_by_role("status")).to_have_text("Connection lost; reconnecting…")
        server.start()
        await expect(page.get_by_role("status")).to_have_text("Reconnected.")
        await expect(page.get_by_role("button", name="Send")).to_be_enabled()
        after = await reply.text_content()
        session_id = await page.evaluate("window.iacCode.view.sessionId")
        cursor = await page.evaluate("window.iacCode.view.lastSeq")
        ahead = await newest_journaled(server, session_id, workdir, cursor)
        await send(page, "after the restart")
        await expect(conversation(page)).to_contain_text("You said: after the restart")
    assert before and after and after.startswith(before.rstrip())  # nothing shown was taken back
    assert ahead["data"]["reason"] == "cursor_ahead"
    assert ahead["data"]["newest"] == cursor  # the page holds every update journaled


async def test_a_server_restarted_with_another_token_asks_to_sign_in_again(
    page: Page, tmp_path: Path
) -> None:
    with serving(tmp_path) as server:
        await signed_in(page, server)
        server.stop()
        server.env["IACCODE_ACP_HTTP_TOKEN"] = "a-new-token-9876543210"
        server.start()
        await expect(page.get_by_role("alert")).to_have_text(
            "The server no longer accepts this token: sign in again."
        )
        await page.get_by_label("Access token").fill("a-new-token-9876543210")
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("status")).to_have_text("Connected")
