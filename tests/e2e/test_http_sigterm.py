"""A server stopped with SIGTERM in the middle of a turn (as a service manager stops it)
keeps what its clients were shown: the running turn is cancelled and stores its reply so
far, and the journal keeps every update it sent, before the process exits. uvicorn
re-raises the signal once its serve() ends, so this must happen in its shutdown, not after
(bootstrap/http.py). Driven with the official ACP client over the WebSocket."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.connection import StreamDirection, StreamEvent

from tests.e2e.conftest import RecordingClient
from tests.support.http_process import TOKEN, Server, serving
from tests.support.official_ws import official_on_websocket, ws_url
from tests.support.patience import PATIENCE

pytestmark = pytest.mark.e2e


@dataclass
class Editor:
    conn: Any
    client: RecordingClient
    seqs: list[int] = field(default_factory=list)  # `_meta.iac_code.seq` of each update


@asynccontextmanager
async def editor(server: Server) -> AsyncIterator[Editor]:
    client = RecordingClient()
    seqs: list[int] = []

    def observe(event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.INCOMING and message.get("method"):
            seq = ((message.get("params") or {}).get("_meta") or {}).get("iac_code", {})
            if isinstance(seq.get("seq"), int):
                seqs.append(seq["seq"])

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with official_on_websocket(
        ws_url(server.base),
        client,
        name="editor",
        headers=headers,
        observe=observe,
        server_may_be_gone=True,
    ) as (conn, _):
        yield Editor(conn, client, seqs)


async def shown_some_reply(editor: Editor) -> str:
    deadline = asyncio.get_running_loop().time() + PATIENCE
    while len(editor.client.agent_text()) < 20:
        assert asyncio.get_running_loop().time() < deadline, editor.client.kinds()
        await asyncio.sleep(0.01)
    return editor.client.agent_text()


async def test_sigterm_mid_turn_keeps_the_reply_and_every_update_sent(
    tmp_path: Path, workdir: Path
) -> None:
    with serving(tmp_path, IAC_CODE_DEMO_PACE="30") as server:
        async with editor(server) as first:
            session = await first.conn.new_session(cwd=str(workdir), mcp_servers=[])
            turn = asyncio.ensure_future(
                first.conn.prompt(session_id=session.session_id, prompt=[text_block("a story")])
            )
            await shown_some_reply(first)
            await asyncio.to_thread(server.stop)  # SIGTERM, and wait for the exit
            with contextlib.suppress(Exception):  # its answer died with the connection
                await turn
            shown, last_seq = first.client.agent_text(), max(first.seqs)
        server.start()
        async with editor(server) as after:
            await after.conn.load_session(
                cwd=str(workdir), session_id=session.session_id, mcp_servers=[]
            )
            replayed = after.client.agent_text()
        async with editor(server) as resumed:  # from the last update the first one had
            await resumed.conn.load_session(
                cwd=str(workdir),
                session_id=session.session_id,
                mcp_servers=[],
                field_meta={"iac_code": {"after": last_seq}},
            )
    assert replayed.startswith(shown)  # the interrupted reply was stored, all it had shown
    assert "You said" in replayed
