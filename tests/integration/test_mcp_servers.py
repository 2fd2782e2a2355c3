"""The MCP adapter against our real test server (tests/support/mcp_server.py) on each transport."""

import asyncio
import logging
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from adapters.mcp.servers import SdkMcpConnector, SdkMcpServers
from application.ports.mcp import McpPromptError
from domain.mcp import McpServerSpec, McpServerState, McpStatus, McpTransport
from tests.support.mcp_processes import ROOT, SERVER, McpServerProcesses

pytestmark = pytest.mark.integration

GENEROUS = 60.0  # a timeout that only a broken test would reach


def stdio(name: str, *options: str, env: dict[str, str] | None = None) -> McpServerSpec:
    return McpServerSpec(
        name=name,
        transport=McpTransport.STDIO,
        command=sys.executable,
        args=(*SERVER, *options),
        env={"PYTHONPATH": ROOT, **(env or {})},
    )


class HttpServers(McpServerProcesses):
    def spec(self, name: str, transport: str, *options: str, **fields: object) -> McpServerSpec:
        url = self.start(transport, *options)
        return McpServerSpec(
            name=name, transport=McpTransport(transport), url=str(fields.pop("url", url)), **fields
        )  # type: ignore[arg-type]


@pytest.fixture
def http_servers() -> Iterator[HttpServers]:
    servers = HttpServers()
    yield servers
    servers.stop()


class Opened:
    """Opens server sets, records what they report, and closes them after the test."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.changes: list[McpServerState] = []
        self.opened: list[SdkMcpServers] = []

    async def __call__(
        self, *specs: McpServerSpec, connect_timeout: float = GENEROUS, ready: bool = True
    ) -> SdkMcpServers:
        async def record(state: McpServerState) -> None:
            self.changes.append(state)

        connector = SdkMcpConnector(connect_timeout, call_timeout=GENEROUS)
        servers = connector.open(specs, cwd=self.cwd, on_change=record)
        self.opened.append(servers)
        if ready:
            await servers.ready()
        return servers

    def statuses(self, name: str) -> list[McpStatus]:
        return [state.status for state in self.changes if state.name == name]


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[Opened]:
    opener = Opened(str(tmp_path))
    yield opener
    for servers in opener.opened:
        await servers.aclose()


@pytest.fixture(params=["stdio", "http", "sse"])
def good(
    request: pytest.FixtureRequest, http_servers: HttpServers
) -> Callable[[str], McpServerSpec]:
    """A way to make a working test server on each transport."""
    if request.param == "stdio":
        return lambda name: stdio(name)
    return lambda name: http_servers.spec(name, request.param)


async def until(condition: Callable[[], bool], bound: float = GENEROUS) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while not condition():
        assert loop.time() < deadline, "gave up waiting"
        await asyncio.sleep(0.01)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie is dead, only not yet reaped by its parent


async def test_tools_are_listed_and_called(
    good: Callable[[str], McpServerSpec], opened: Opened
) -> None:
    servers = await opened(good("t"))

    [state] = servers.states()
    assert state.status is McpStatus.CONNECTED and state.tools >= 10 and state.prompts == 1
    assert opened.statuses("t") == [McpStatus.CONNECTING, McpStatus.CONNECTED]
    tools = {tool.definition.name: tool for tool in servers.tools()}
    assert tools["mcp__t__echo"].title == "Echo"
    assert tools["mcp__t__add"].title == "Add two numbers."  # the description's first line
    assert tools["mcp__t__add"].server == "t"
    assert tools["mcp__t__echo"].definition.input_schema["required"] == ["text"]

    echoed = await servers.call_tool("mcp__t__echo", {"text": "hello"})
    assert (echoed.text, echoed.is_error) == ("hello", False)
    assert echoed.raw_output == {"server": "t", "tool": "echo", "isError": False}
    assert [o.text for o in echoed.output] == ["hello"]  # type: ignore[union-attr]
    assert (await servers.call_tool("mcp__t__add", {"a": 2, "b": 3})).text == "5"

    image = await servers.call_tool("mcp__t__image", {})
    assert image.text == "[image image/png, 70 bytes]" and not image.is_error
    failed = await servers.call_tool("mcp__t__fail", {})
    assert (failed.text, failed.is_error) == ("it went wrong", True)
    mixed = await servers.call_tool("mcp__t__mixed", {})
    assert mixed.text == "inside a.txt\n[resource file:///b.txt]"

    unknown = await servers.call_tool("mcp__t__nope", {})
    assert unknown.is_error and "mcp__t__nope" in unknown.text
    bad_arguments = await servers.call_tool("mcp__t__add", {"a": "x"})
    assert bad_arguments.is_error


async def test_prompts_are_fetched(good: Callable[[str], McpServerSpec], opened: Opened) -> None:
    servers = await opened(good("t"))

    [prompt] = servers.prompts()
    assert (prompt.name, prompt.server, prompt.description) == (
        "mcp__t__review",
        "t",
        "Review a file.",
    )
    assert [(a.name, a.required) for a in prompt.arguments] == [("file", True)]
    text = await servers.get_prompt("mcp__t__review", {"file": "x.py"})
    assert text == "Please review x.py.\n\nLooking at it.\n\nfile body"

    with pytest.raises(McpPromptError, match="needs: file"):
        await servers.get_prompt("mcp__t__review", {})
    with pytest.raises(McpPromptError, match="no MCP prompt named mcp__t__other"):
        await servers.get_prompt("mcp__t__other", {})


async def test_broken_servers_fail_alone(opened: Opened, http_servers: HttpServers) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    http_url = http_servers.start("http")
    specs = [
        stdio("good"),
        McpServerSpec(name="missing", transport=McpTransport.STDIO, command="/no/such/server"),
        stdio("exits", "--exit-at-once", "--stderr", "cannot start: no config"),
        McpServerSpec(name="refused", transport=McpTransport.HTTP, url=refused),
        McpServerSpec(name="notfound", transport=McpTransport.HTTP, url=http_url + "/nope"),
        McpServerSpec(name="ssebad", transport=McpTransport.SSE, url=http_url),
    ]
    servers = await opened(*specs)

    states = {state.name: state for state in servers.states()}
    assert states["good"].status is McpStatus.CONNECTED
    assert {s.status for n, s in states.items() if n != "good"} == {McpStatus.FAILED}
    assert states["missing"].error == "command not found: /no/such/server"
    assert states["exits"].error == "the server exited with status 3: cannot start: no config"
    assert states["refused"].error is not None and "cannot connect" in states["refused"].error
    assert states["notfound"].error == f"HTTP 404 from {http_url}/nope"
    assert states["ssebad"].error
    for name in states:
        assert opened.statuses(name)[0] is McpStatus.CONNECTING
        assert len(opened.statuses(name)) == 2
    assert {tool.server for tool in servers.tools()} == {"good"}
    assert (await servers.call_tool("mcp__good__echo", {"text": "still"})).text == "still"


async def test_a_server_that_never_answers_times_out(opened: Opened) -> None:
    servers = await opened(stdio("mute", "--hang"), connect_timeout=0.5)

    [state] = servers.states()
    assert (state.status, state.error) == (McpStatus.FAILED, "did not answer within 0.5 s")
    assert servers.tools() == ()


async def test_a_crashed_server_is_started_again_once(opened: Opened) -> None:
    servers = await opened(stdio("c"))

    crashed = await servers.call_tool("mcp__c__crash", {})
    assert crashed.is_error and "exited with status 7" in crashed.text
    await until(lambda: servers.states()[0].status is McpStatus.FAILED)
    assert servers.states()[0].error is not None
    assert "exited with status 7" in servers.states()[0].error
    # Still offered: calling one of its tools is what starts it again.
    assert "mcp__c__echo" in [t.definition.name for t in servers.tools()]

    assert (await servers.call_tool("mcp__c__echo", {"text": "back"})).text == "back"
    assert opened.statuses("c") == [
        McpStatus.CONNECTING, McpStatus.CONNECTED, McpStatus.FAILED,
        McpStatus.CONNECTING, McpStatus.CONNECTED,
    ]  # fmt: skip
    assert len(servers.tools()) >= 10

    await servers.call_tool("mcp__c__crash", {})
    await until(lambda: servers.states()[0].status is McpStatus.FAILED)
    again = await servers.call_tool("mcp__c__echo", {"text": "no"})
    assert again.is_error and "not available" in again.text
    assert servers.tools() == ()  # no restart left: no longer offered
    assert opened.statuses("c")[-1] is McpStatus.FAILED
    assert len(opened.statuses("c")) == 6


async def test_a_cancelled_call_stops_waiting_and_the_server_stays_usable(
    good: Callable[[str], McpServerSpec], opened: Opened, tmp_path: Path
) -> None:
    servers = await opened(good("s"))
    marker = tmp_path / "started"

    call = asyncio.create_task(servers.call_tool("mcp__s__slow", {"marker": str(marker)}))
    await until(marker.exists)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    assert (await servers.call_tool("mcp__s__echo", {"text": "next"})).text == "next"
    assert servers.states()[0].status is McpStatus.CONNECTED


async def test_aclose_leaves_no_process_behind(opened: Opened) -> None:
    servers = await opened(stdio("p"), stdio("q"))
    server_pid = int((await servers.call_tool("mcp__p__pid", {})).text)
    child_pid = int((await servers.call_tool("mcp__p__spawn_child", {})).text)
    other_pid = int((await servers.call_tool("mcp__q__pid", {})).text)
    assert alive(server_pid) and alive(child_pid) and alive(other_pid)

    await servers.aclose()
    await servers.aclose()  # idempotent

    await until(lambda: not any(map(alive, (server_pid, child_pid, other_pid))))
    assert servers.tools() == () and servers.prompts() == ()
    after = await servers.call_tool("mcp__p__pid", {})
    assert after.is_error and "closed" in after.text


async def test_a_crashed_server_leaves_no_child_behind(opened: Opened) -> None:
    servers = await opened(stdio("p"))
    child_pid = int((await servers.call_tool("mcp__p__spawn_child", {})).text)

    await servers.call_tool("mcp__p__crash", {})
    await until(lambda: servers.states()[0].status is McpStatus.FAILED)

    await until(lambda: not alive(child_pid))


async def test_stdio_servers_get_the_session_cwd_and_a_minimal_environment(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IAC_CODE_OWN_SECRET", "ours-only")
    servers = await opened(stdio("e", env={"GIVEN": "to-the-server"}))

    assert (await servers.call_tool("mcp__e__cwd", {})).text == str(tmp_path)
    assert (await servers.call_tool("mcp__e__env", {"name": "GIVEN"})).text == "***"
    assert (await servers.call_tool("mcp__e__env", {"name": "IAC_CODE_OWN_SECRET"})).text == (
        "<unset>"
    )
    assert (await servers.call_tool("mcp__e__env", {"name": "PATH"})).text == os.environ["PATH"]


async def test_http_headers_are_sent(opened: Opened, http_servers: HttpServers) -> None:
    for transport in ("http", "sse"):
        spec = http_servers.spec(
            transport, transport, "--require-token", "tok", headers={"Authorization": "Bearer tok"}
        )
        servers = await opened(spec)
        assert servers.states()[0].status is McpStatus.CONNECTED, servers.states()


async def test_secrets_never_leak(
    opened: Opened, http_servers: HttpServers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret, token = "sekret-value-123", "tok-secret-456"
    specs = [
        stdio("starts", env={"API_KEY": secret}),
        stdio("exits", "--exit-at-once", "--stderr", f"bad key {secret}", env={"API_KEY": secret}),
        http_servers.spec(
            "wrong",
            "http",
            "--require-token",
            "right",
            headers={"Authorization": f"Bearer {token}"},
        ),
        http_servers.spec(
            "wrongsse",
            "sse",
            "--require-token",
            "right",
            headers={"Authorization": f"Bearer {token}"},
        ),
    ]
    servers = await opened(*specs)

    results = [
        await servers.call_tool("mcp__starts__env", {"name": "API_KEY"}),
        await servers.call_tool("mcp__starts__echo", {"text": f"say {secret}"}),
        await servers.call_tool("mcp__starts__crash", {}),
    ]
    await until(lambda: servers.states()[0].status is McpStatus.FAILED)
    await servers.aclose()

    states = {state.name: state for state in servers.states()}
    assert states["exits"].error == "the server exited with status 3: bad key ***"
    assert states["wrong"].status is McpStatus.FAILED and "401" in str(states["wrong"].error)
    seen = [
        *(repr(state) for state in [*servers.states(), *opened.changes]),
        *(repr(result) for result in results),
        *(record.getMessage() for record in caplog.records),
        *(str(record.exc_info) for record in caplog.records),
    ]
    assert not [text for text in seen if secret in text or token in text]
    assert results[0].text == "***" and results[1].text == "say ***"


async def test_colliding_tool_names_keep_the_first(
    opened: Opened, caplog: pytest.LogCaptureFixture
) -> None:
    servers = await opened(stdio("d", "--colliding-tools"))

    dup = [tool for tool in servers.tools() if tool.definition.name == "mcp__d__dup_name"]
    assert [tool.title for tool in dup] == ["first of two"]
    assert (await servers.call_tool("mcp__d__dup_name", {})).text == "first"
    assert "'dup_name'" in caplog.text and "only 'dup.name' is offered" in caplog.text
