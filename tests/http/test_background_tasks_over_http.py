"""Issue 30, background tasks over HTTP+SSE and WebSocket, with the official SDK clients on
the real server: a task's end reaches every attached client; a task outlives the client
that started it, and the client attaching next sees it and its end; the last client's
close kills it. Every message the agent sends is checked against the newest schema file."""

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.http.test_agent_over_http import agent_server, anthropic_settings
from tests.http.test_shared_sessions import DEADLINE, Follower, both_transports, sdk, sdk_ws
from tests.support.processes import survivors
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use
from tests.support.wire_validator import AGENT

pytestmark = pytest.mark.integration


@pytest.fixture
def marker() -> Iterator[str]:
    name = f"iac-task-{uuid.uuid4().hex[:12]}"
    yield name
    for pid in survivors(name):  # leave nothing behind, even failing
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def background(command: str) -> object:
    arguments = {"command": command, "run_in_background": True}
    return stream(tool_use("bash", arguments, id="toolu_bg"), stop_reason="tool_use")


def statuses(client: Follower) -> list[str]:
    return [u.status for u in client.tool_updates("toolu_bg") if u.status is not None]


def output_of(client: Follower) -> str:
    """What the call's updates showed as output (not its input, which names the command)."""
    return "".join(
        getattr(getattr(c, "content", None), "text", "") or ""
        for u in client.tool_updates("toolu_bg")
        for c in u.content or []
    )


def tasks_meta(client: Follower) -> list[list[dict[str, Any]]]:
    found = []
    for message in client.incoming("session/update"):
        update = message["params"]["update"]
        listed = (update.get("_meta") or {}).get("iac_code", {}).get("tasks")
        if update["sessionUpdate"] == "session_info_update" and listed is not None:
            found.append(listed)
    return found


def assert_schema_clean(*clients: Follower) -> None:
    for client in clients:
        checker = SchemaFileValidator(which="stable")
        for message in client.raw:
            checker.check(AGENT, message)
        checker.assert_clean()
        client.wire.assert_clean()


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_a_tasks_end_reaches_every_attached_client(
    tmp_path: Path, workdir: Path, transport: str
) -> None:
    connect = sdk if transport == "http" else sdk_ws
    go = workdir / "go"
    command = f"until [ -e {go} ]; do sleep 0.05; done; echo done"
    # b never answers the permission request (a does): the first answer wins.
    a, b = Follower(answers=["allow_once"]), Follower(hold=True)
    with ScriptedAnthropic(background(command), stream(text("started"))) as model:
        async with (
            both_transports(anthropic_settings(tmp_path, model)) as base,
            connect(base, a) as first,
            connect(base, b) as second,
        ):
            sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            await second.load_session(cwd=str(workdir), session_id=sid)
            done = await first.prompt(session_id=sid, prompt=[text_block("build")])
            assert done.stop_reason == "end_turn"
            assert statuses(a)[-1] == "in_progress"
            go.touch()
            for client in (a, b):
                await _until_told_done(client)
        model.assert_script_consumed()
    assert_schema_clean(a, b)


async def test_a_task_outlives_its_client_and_the_next_one_sees_it_end(
    tmp_path: Path, workdir: Path, marker: str
) -> None:
    go = workdir / "go"
    command = f"echo warming-7; until [ -e {go} ]; do sleep 0.05; done; echo finished"
    a, b = Follower(answers=["allow_once"]), Follower()
    with ScriptedAnthropic(background(command), stream(text("started"))) as model:
        async with both_transports(anthropic_settings(tmp_path, model)) as base:
            async with sdk_ws(base, a) as first:
                sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
                done = await first.prompt(session_id=sid, prompt=[text_block("serve")])
                assert done.stop_reason == "end_turn"
                await a.until(lambda: "warming-7" in output_of(a))
            # a is gone (its session closed in memory); the task runs on.
            async with sdk_ws(base, b) as second:
                await second.load_session(cwd=str(workdir), session_id=sid)
                await b.until(lambda: bool(tasks_meta(b)))
                assert tasks_meta(b)[-1][0]["state"] == "running"
                assert statuses(b)[-1] == "in_progress"  # the replay shows it running,
                assert "warming-7" in output_of(b)  # with its output so far
                go.touch()
                await b.until(lambda: "completed" in statuses(b))
                assert "finished" in output_of(b)
                await b.until(lambda: tasks_meta(b)[-1][0]["state"] == "exited")
        model.assert_script_consumed()
    assert_schema_clean(a, b)


async def test_the_last_clients_close_kills_the_task(
    tmp_path: Path, workdir: Path, marker: str
) -> None:
    a = Follower(answers=["allow_once"])
    with ScriptedAnthropic(
        background(f"exec -a {marker} sleep 1000"), stream(text("started"))
    ) as model:
        async with (
            agent_server(anthropic_settings(tmp_path, model)) as base,
            sdk(base, a) as first,
        ):
            sid = (await first.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            await first.prompt(session_id=sid, prompt=[text_block("serve")])
            await asyncio.wait_for(_until_running(marker), DEADLINE)
            await first.close_session(session_id=sid)
            assert survivors(marker) == []
        model.assert_script_consumed()
    assert_schema_clean(a)


async def _until_told_done(client: Follower) -> None:
    await client.until(lambda: "completed" in statuses(client))
    assert "done" in str(client.tool_updates("toolu_bg")[-1].content)
    await client.until(lambda: "Background task t1" in client.agent_text())


async def _until_running(marker: str) -> None:
    while not survivors(marker):
        await asyncio.sleep(0.02)
