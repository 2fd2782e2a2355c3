"""The `allowlist` network through the real bubblewrap and the server's egress proxy: a
listed host (a test HTTP server, reached by name) answers; another is refused with the
proxy's message, as is a listed name on the server's own port; `full` reaches both; a
command that ignores the proxy reaches nothing."""

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from adapters.workspace.egress import AllowList, EgressProxy
from adapters.workspace.local import LocalWorkspace
from application.ports.workspace import CommandRun
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxPolicy
from tests.integration.sandbox.conftest import World, run_in
from tests.support.hello_http import PYTHON, fetch, serving

pytestmark = pytest.mark.integration


@pytest.fixture
def ports() -> Iterator[tuple[int, int]]:
    with serving("127.0.0.1") as listed, serving("127.0.0.2") as other:
        yield listed, other


@pytest.fixture
async def proxy(ports: tuple[int, int]) -> AsyncIterator[EgressProxy]:
    listed, _ = ports
    egress = EgressProxy(AllowList([f"localhost:{listed}"], own_ports=[]))
    yield egress
    await egress.close()


async def run(world: World, proxy: EgressProxy, network: NetworkLevel, command: str) -> CommandRun:
    policy = SandboxPolicy(
        level=SandboxLevel.WORKSPACE_WRITE, network=network, allow=("localhost",)
    )
    workspace = LocalWorkspace(world.confinement(), proxy).under(policy, (str(world.work),))
    return await run_in(workspace, command, world.work)


async def test_a_listed_host_is_reached_by_name_through_the_proxy(
    world: World, proxy: EgressProxy, ports: tuple[int, int]
) -> None:
    listed, _ = ports
    ran = await run(world, proxy, NetworkLevel.ALLOWLIST, fetch(f"http://localhost:{listed}/"))
    assert ran.output.strip() == "hello from 127.0.0.1", ran.output


async def test_another_host_is_refused_with_the_proxys_message(
    world: World, proxy: EgressProxy, ports: tuple[int, int]
) -> None:
    _, other = ports
    ran = await run(world, proxy, NetworkLevel.ALLOWLIST, fetch(f"http://127.0.0.2:{other}/"))
    assert ran.output.startswith("403 iac-code sandbox: 127.0.0.2:"), ran.output
    assert "is not on the sandbox's allow list" in ran.output


async def test_a_command_ignoring_the_proxy_reaches_nothing(
    world: World, proxy: EgressProxy, ports: tuple[int, int]
) -> None:
    listed, _ = ports
    ran = await run(
        world, proxy, NetworkLevel.ALLOWLIST, f"exec 3<>/dev/tcp/127.0.0.1/{listed} && echo in"
    )
    assert "in" not in ran.output.split()


def raw_get(host: str, port: int) -> str:
    """An HTTP request in bash alone (no interpreter is bound without an allowlist)."""
    return (
        f"exec 3<>/dev/tcp/{host}/{port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 "
        "&& cat <&3 | tail -n 1"
    )


async def test_full_reaches_both(world: World, proxy: EgressProxy, ports: tuple[int, int]) -> None:
    listed, other = ports
    runs = await asyncio.gather(
        run(world, proxy, NetworkLevel.FULL, raw_get("127.0.0.1", listed)),
        run(world, proxy, NetworkLevel.FULL, raw_get("127.0.0.2", other)),
    )
    assert [r.output.strip() for r in runs] == ["hello from 127.0.0.1", "hello from 127.0.0.2"]


async def test_the_servers_own_port_is_refused_whatever_is_listed(
    world: World, ports: tuple[int, int]
) -> None:
    listed, _ = ports
    egress = EgressProxy(AllowList([f"localhost:{listed}"], own_ports=[listed]))
    try:
        ran = await run(world, egress, NetworkLevel.ALLOWLIST, fetch(f"http://localhost:{listed}/"))
    finally:
        await egress.close()
    assert ran.output.startswith("403 iac-code sandbox:"), ran.output
    assert "the server's own port" in ran.output


async def test_a_name_made_to_point_at_loopback_is_refused_unless_listed_so() -> None:
    allow = AllowList(["localhost:8080", "example.test:8080"])
    assert (await allow.verdict("localhost", 8080))[0] == "127.0.0.1"
    assert (await allow.verdict("localhost", 9090))[1] == (
        "localhost:9090 is not on the sandbox's allow list"
    )
    refused = AllowList(["*.localhost:8080"])  # a wildcard is not a loopback entry
    address, why = await refused.verdict("app.localhost", 8080)
    assert address is None and ("loopback" in why or "does not resolve" in why)


async def test_a_tunnel_to_a_listed_host_is_opened_for_https_clients(
    world: World, proxy: EgressProxy, ports: tuple[int, int]
) -> None:
    listed, _ = ports
    code = (
        "import os, socket\n"
        "port = int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1])\n"
        "s = socket.create_connection(('127.0.0.1', port))\n"
        f"s.sendall(b'CONNECT localhost:{listed} HTTP/1.1\\\\r\\\\n\\\\r\\\\n')\n"
        "print(s.recv(1024).split(b'\\\\r\\\\n')[0].decode())\n"
        "s.sendall(b'GET / HTTP/1.0\\\\r\\\\n\\\\r\\\\n')\n"
        "reply = b''.join(iter(lambda: s.recv(4096), b''))\n"
        "print(reply.split(b'\\\\r\\\\n\\\\r\\\\n')[1].decode())\n"
    )
    ran = await run(world, proxy, NetworkLevel.ALLOWLIST, f'{PYTHON} -I -c "{code}"')
    assert ran.output.split("\n")[:2] == [
        "HTTP/1.1 200 Connection established",
        "hello from 127.0.0.1",
    ], ran.output
