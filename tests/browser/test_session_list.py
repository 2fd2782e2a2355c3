"""The session list: pages by session/list's cursor, filtered by directory (on the server)
and by title (in the page)."""

import json
from pathlib import Path

from playwright.async_api import Page, expect
from websockets.asyncio.client import connect

from tests.browser.conftest import BROWSER_TESTS, TOKEN, Server, serving, signed_in
from tests.http.conftest import INITIALIZE

pytestmark = BROWSER_TESTS

PAGE_SIZE = 50  # application/sessions/listing.py


async def make_sessions(server: Server, cwd: Path, count: int, title: str | None = None) -> None:
    """`count` sessions in `cwd`, made by another client (raw JSON-RPC on the WebSocket)."""
    url = server.base.replace("http://", "ws://") + "/acp"
    async with connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as socket:
        await socket.send(json.dumps(INITIALIZE))
        await socket.recv()

        async def call(
            request_id: int, method: str, params: dict[str, object]
        ) -> dict[str, object]:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            await socket.send(json.dumps(message))
            while (answer := json.loads(await socket.recv())).get("id") != request_id:
                pass
            return answer["result"]  # type: ignore[no-any-return]

        for n in range(count):
            made = await call(2 * n + 1, "session/new", {"cwd": str(cwd), "mcpServers": []})
            if title is not None:
                rename = {"sessionId": made["sessionId"], "title": title}
                await call(2 * n + 2, "_iac_code/session/rename", rename)


async def test_the_list_pages_and_filters_by_directory_and_title(
    page: Page, tmp_path: Path
) -> None:
    many, one = tmp_path / "many", tmp_path / "one"
    many.mkdir()
    one.mkdir()
    with serving(tmp_path) as server:
        await make_sessions(server, many, PAGE_SIZE)
        await make_sessions(server, one, 1, title="Bravo release")
        await signed_in(page, server)
        listed = page.get_by_role("list", name="Sessions").get_by_role("listitem")
        await expect(listed).to_have_count(PAGE_SIZE)
        await page.get_by_role("button", name="More sessions").click()
        await expect(listed).to_have_count(PAGE_SIZE + 1)
        await expect(page.get_by_role("button", name="More sessions")).to_have_count(0)

        await page.get_by_role("searchbox", name="Filter by title").fill("bravo")
        await expect(listed).to_have_count(1)
        await expect(listed).to_contain_text("Bravo release")
        await page.get_by_role("searchbox", name="Filter by title").fill("")

        await page.get_by_role("searchbox", name="Filter by directory").fill(str(one))
        await page.get_by_role("button", name="Apply").click()
        await expect(listed).to_have_count(1)
        await expect(listed).to_contain_text(str(one))
