"""Issue 30, background tasks, through the real server over stdio: `bash` with
`run_in_background` goes on after the turn, its tool call ending when the command exits;
task_output and task_kill from the model; /tasks for the user; session/close and the
server's death kill the task's processes; the cap and the output bounds hold. Every
message the agent sends is checked against the newest ACP schema file. Kept whole (just
over 400 lines): one feature's life, from the tool call to the server's death, in order."""

import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.e2e.conftest import Agent, Spawn, anthropic_env, until
from tests.e2e.test_stdio_workspace import TERMINAL, EditorClient
from tests.support.processes import survivors
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = pytest.mark.e2e


def background(command: str, call_id: str = "toolu_bg") -> object:
    arguments = {"command": command, "run_in_background": True}
    return stream(tool_use("bash", arguments, id=call_id), stop_reason="tool_use")


def use(name: str, arguments: dict[str, Any], call_id: str) -> object:
    return stream(tool_use(name, arguments, id=call_id), stop_reason="tool_use")


async def start(agent: Agent, workdir: Path, capabilities: Any = None) -> str:
    await agent.initialize(capabilities)
    return (await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id


async def prompt(agent: Agent, sid: str, words: str) -> str:
    done = await agent.conn.prompt(session_id=sid, prompt=[text_block(words)])
    return str(done.stop_reason)


def statuses(agent: Agent, call_id: str) -> list[str]:
    return [u.status for u in agent.client.tool_updates(call_id) if u.status is not None]


def shown_text(update: Any) -> str:
    return "".join(
        getattr(getattr(c, "content", None), "text", "") or "" for c in update.content or []
    )


def output_of(agent: Agent, call_id: str = "toolu_bg") -> str:
    """What the call's updates showed as output (not its input, which names the command)."""
    return "".join(shown_text(u) for u in agent.client.tool_updates(call_id))


def result_text(request: Any) -> str:
    """The text of the tool result a model request carries last."""
    return str(request.messages[-1]["content"][0]["content"])


def final(agent: Agent, call_id: str) -> Any:
    return next(
        u
        for u in reversed(agent.client.tool_updates(call_id))
        if u.status in ("completed", "failed")
    )


def task_lists(agent: Agent) -> list[list[dict[str, Any]]]:
    """Every `_meta.iac_code.tasks` the agent sent, as sent."""
    found = []
    for message in agent.sent_by_agent("session/update"):
        update = message["params"]["update"]
        meta = update.get("_meta") or {}
        if update["sessionUpdate"] == "session_info_update" and "tasks" in meta.get("iac_code", {}):
            found.append(meta["iac_code"]["tasks"])
    return found


def assert_schema_clean(agent: Agent) -> None:
    checker = SchemaFileValidator(which="stable")
    for sender, message in agent.raw:
        checker.check(sender, message)
    checker.assert_clean()


@pytest.fixture
def marker() -> Iterator[str]:
    name = f"iac-task-{uuid.uuid4().hex[:12]}"
    yield name
    for pid in survivors(name):  # the machine is shared: leave nothing behind, even failing
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def waits_for(flag: Path) -> str:
    """Shell that waits until `flag` exists: the test decides when the command ends."""
    return f"until [ -e {flag} ]; do sleep 0.05; done"


async def test_the_turn_ends_before_the_task_and_its_call_completes_when_it_exits(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    go = workdir / "go"
    server.script(background(f"echo started; {waits_for(go)}; echo done"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]  # starting it asks, like any bash command
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "start the build") == "end_turn"
        # The turn is over; the task is not: its call is still in progress.
        assert statuses(agent, "toolu_bg")[-1] == "in_progress"
        told = str(server.requests[1].messages[-1])
        assert "task t1" in told and "task_output" in told
        assert task_lists(agent)[-1][0]["state"] == "running"
        go.touch()
        await until(lambda: "completed" in statuses(agent, "toolu_bg"), agent)
        ended = final(agent, "toolu_bg")
        assert "done" in shown_text(ended) and ended.raw_output["exitCode"] == 0
        await until(lambda: task_lists(agent)[-1][0]["state"] == "exited", agent)
        # The session was idle: the user is told (agent text until notices land).
        await until(lambda: "Background task t1" in agent.client.agent_text(), agent)
    assert_schema_clean(agent)


async def test_a_failing_task_ends_failed_with_its_exit_code(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(background("echo broken >&2; exit 3"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "build") == "end_turn"
        await until(lambda: "failed" in statuses(agent, "toolu_bg"), agent)
        ended = final(agent, "toolu_bg")
        assert ended.raw_output["exitCode"] == 3 and "broken" in shown_text(ended)
    assert_schema_clean(agent)


async def test_task_output_and_task_kill_from_the_model(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    go = workdir / "go"
    command = f"echo first; {waits_for(go)}; echo second; exec -a {marker} sleep 1000"
    server.script(
        background(command),
        stream(text("started")),
        use("task_output", {"id": "t1"}, "toolu_out1"),
        use("task_output", {"id": "t1"}, "toolu_out2"),
        use("task_kill", {"id": "t1"}, "toolu_kill"),
        stream(text("stopped")),
    )
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve") == "end_turn"
        await until(lambda: "first" in output_of(agent), agent)
        go.touch()
        await until(lambda: "second" in output_of(agent), agent)
        await until(lambda: bool(survivors(marker)), agent)
        assert await prompt(agent, sid, "check it, then stop it") == "end_turn"
        # The model sees its tasks with the turn's environment.
        assert "t1 `echo first" in server.requests[2].environment[-1]
        first_read = result_text(server.requests[3])
        assert first_read.startswith("first\nsecond\n") and first_read.endswith(" running.")
        second_read = result_text(server.requests[4])
        assert second_read.startswith("(no new output)")  # only what is new since the last read
        assert "was stopped" in str(server.requests[5].messages[-1])
        assert survivors(marker) == []  # the kill returned once its tree was gone
        ended = final(agent, "toolu_bg")
        assert ended.status == "failed" and ended.raw_output["killed"] is True
        assert len(agent.client.permission_requests) == 1  # only starting it asked
    assert_schema_clean(agent)


async def test_tasks_command_lists_and_kills(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(background(f"echo hello; exec -a {marker} sleep 1000"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve") == "end_turn"
        await until(lambda: bool(survivors(marker)), agent)
        await until(lambda: "hello" in output_of(agent), agent)
        before = len(agent.client.agent_text())
        assert await prompt(agent, sid, "/tasks") == "end_turn"
        listing = agent.client.agent_text()[before:]
        assert "t1 `echo hello" in listing and "running" in listing
        assert "\n    hello" in listing  # its last lines
        assert await prompt(agent, sid, "/tasks kill t1") == "end_turn"
        assert "Task t1" in agent.client.agent_text() and survivors(marker) == []
        assert await prompt(agent, sid, "/tasks kill t9") == "end_turn"
        assert "No background task 't9'" in agent.client.agent_text()
        assert len(server.requests) == 2  # the commands never reached the model
    assert_schema_clean(agent)


async def test_session_close_kills_the_task(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(background(f"exec -a {marker} sleep 1000"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve") == "end_turn"
        await until(lambda: bool(survivors(marker)), agent)
        await agent.conn.close_session(session_id=sid)
        assert survivors(marker) == []  # the close answered once the tree was gone
    assert_schema_clean(agent)


async def test_deleting_the_session_kills_the_task(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(background(f"exec -a {marker} sleep 1000"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve") == "end_turn"
        await until(lambda: bool(survivors(marker)), agent)
        # The pinned SDK has no call for it: a raw request, as the history tests send.
        await agent.conn._conn.send_request("session/delete", {"sessionId": sid})
        assert survivors(marker) == []
    assert_schema_clean(agent)


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
async def test_the_servers_shutdown_kills_the_task(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str, how: str
) -> None:
    server.script(background(f"exec -a {marker} sleep 1000"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve") == "end_turn"
        await until(lambda: bool(survivors(marker)), agent)
        if how == "SIGTERM":
            agent.process.send_signal(signal.SIGTERM)
        else:
            agent.process.stdin.close()
        await agent.process.wait()
        await until(lambda: survivors(marker) == [], agent)
    assert_schema_clean(agent)


async def test_the_servers_death_kills_the_task(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(background(f"exec -a {marker} sleep 1000"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve") == "end_turn"
        await until(lambda: bool(survivors(marker)), agent)
        agent.kill()
        await until(lambda: survivors(marker) == [], agent)
    # The call was stored running; a load on the next server shows that it ended.
    async with spawn(anthropic_env(server)) as again:
        await again.initialize()
        await again.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        assert statuses(again, "toolu_bg")[-1] == "failed"
        assert "The server stopped" in str(again.client.tool_updates("toolu_bg")[-1].content)
    assert_schema_clean(again)


async def test_the_cap_is_answered_clearly(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic, marker: str
) -> None:
    server.script(
        background(f"exec -a {marker} sleep 1000", "toolu_one"),
        background(f"exec -a {marker} sleep 1000", "toolu_two"),
        stream(text("ok")),
    )
    async with spawn(anthropic_env(server, IAC_CODE_MAX_TASKS="1")) as agent:
        agent.client.answers = ["allow_once", "allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "serve twice") == "end_turn"
        refused = str(server.requests[2].messages[-1])
        assert "already runs 1 background tasks" in refused and "task_kill" in refused
        assert statuses(agent, "toolu_two")[-1] == "failed"
        assert statuses(agent, "toolu_one")[-1] == "in_progress"
        assert len(survivors(marker)) == 1
    assert_schema_clean(agent)


async def test_a_flood_stays_within_its_bounds(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        background("head -c 3000000 /dev/zero | tr '\\0' x; echo; echo end"),
        stream(text("started")),
        use("task_output", {"id": "t1"}, "toolu_out"),
        stream(text("read")),
    )
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "flood") == "end_turn"
        await until(lambda: "completed" in statuses(agent, "toolu_bg"), agent)
        assert await prompt(agent, sid, "read it") == "end_turn"
        read = server.requests[3].messages[-1]["content"][0]["content"]
        assert read.startswith("[... ") and "characters not shown" in read
        assert "\nend\n\nTask t1" in read  # the newest output, up to its end
        assert len(str(read)) < 20_000
        for update in agent.client.tool_updates("toolu_bg"):
            assert len(shown_text(update)) < 20_000
        assert all(len(str(t)) < 20_000 for t in task_lists(agent))


async def test_a_task_runs_in_the_editors_terminal_when_it_lends_one(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    go = workdir / "go"
    server.script(background(f"echo in-editor; {waits_for(go)}"), stream(text("ok")))
    editor = EditorClient()
    async with spawn(anthropic_env(server), client=editor) as agent:
        editor.answers = ["allow_once"]
        sid = await start(agent, workdir, TERMINAL)
        assert await prompt(agent, sid, "serve") == "end_turn"

        def embedded() -> list[Any]:
            return [
                c
                for u in editor.tool_updates("toolu_bg")
                for c in u.content or []
                if getattr(c, "type", "") == "terminal"
            ]

        # The task starts beside the turn: its terminal may be lent after the turn's answer.
        await until(lambda: bool(embedded()), agent)
        assert "terminal/create" in editor.methods()
        assert embedded()[0].terminal_id == "term-1"
        assert statuses(agent, "toolu_bg")[-1] == "in_progress"
        go.touch()
        await until(lambda: "completed" in statuses(agent, "toolu_bg"), agent)
        assert "terminal/release" in editor.methods()
        # The end keeps the terminal embedded; the tasks list has the editor's output.
        ended = final(agent, "toolu_bg")
        assert [c.type for c in ended.content] == ["terminal"]
        await until(lambda: "in-editor" in task_lists(agent)[-1][0]["lastLines"], agent)
    assert_schema_clean(agent)


async def test_a_load_after_the_task_ended_shows_it_ended(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(background("echo finished-output"), stream(text("ok")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "run") == "end_turn"
        await until(lambda: "completed" in statuses(agent, "toolu_bg"), agent)
    async with spawn(anthropic_env(server)) as again:
        await again.initialize()
        await again.conn.load_session(session_id=sid, cwd=str(workdir), mcp_servers=[])
        replayed = again.client.tool_updates("toolu_bg")
        assert replayed and "completed" in statuses(again, "toolu_bg")
        assert "finished-output" in output_of(again)
    assert_schema_clean(again)


async def test_a_task_ending_while_idle_starts_a_turn_when_follow_up_is_on(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    go = workdir / "go"
    server.script(
        background(f"{waits_for(go)}; echo 'FAILED test_login'; exit 4"),
        stream(text("started")),
        stream(text("The build failed in test_login; shall I fix it?")),
    )
    async with spawn(anthropic_env(server, IAC_CODE_TASK_FOLLOW_UP="1")) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "build") == "end_turn"
        assert len(server.requests) == 2
        go.touch()
        await until(lambda: "shall I fix it?" in agent.client.agent_text(), agent)
        told = server.requests[2].messages[-1]["content"][0]["text"]
        assert "Background task t1" in told and "exited with code 4" in told
        assert "Its last output:\nFAILED test_login" in told
    assert_schema_clean(agent)


async def test_without_follow_up_an_idle_exit_starts_no_turn(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    go = workdir / "go"
    script = (background(f"{waits_for(go)}; exit 4"), stream(text("started")))
    server.script(*script, stream(text("next answer")))
    async with spawn(anthropic_env(server)) as agent:
        agent.client.answers = ["allow_once"]
        sid = await start(agent, workdir)
        assert await prompt(agent, sid, "build") == "end_turn"
        go.touch()  # it ends while the session is idle
        await until(lambda: "Background task t1" in agent.client.agent_text(), agent)
        # The user's next prompt is the model's next request: no turn slipped in between.
        assert await prompt(agent, sid, "what next?") == "end_turn"
        assert len(server.requests) == 3 and "what next?" in str(server.requests[2].messages)
    assert_schema_clean(agent)
