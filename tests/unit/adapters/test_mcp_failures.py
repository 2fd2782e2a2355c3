"""Secrets masked, and failures described plainly."""

import httpx2
from mcp.shared.exceptions import MCPError

from adapters.mcp.failures import describe, leaf
from adapters.mcp.scrubbing import MASK, Scrubber
from adapters.mcp.transports import Clues, server_environment
from domain.mcp import McpServerSpec, McpTransport

STDIO = McpServerSpec(name="s", transport=McpTransport.STDIO, command="srv")
HTTP = McpServerSpec(name="h", transport=McpTransport.HTTP, url="http://x.test/mcp")


def test_env_and_header_values_are_masked() -> None:
    spec = McpServerSpec(
        name="s",
        transport=McpTransport.HTTP,
        url="http://x.test",
        env={"KEY": "secret-one"},
        headers={"Authorization": "Bearer token-two", "X": "secret-one-and-more"},
    )

    scrub = Scrubber.of(spec)

    assert scrub("a secret-one b") == f"a {MASK} b"
    assert scrub("sent Bearer token-two") == f"sent {MASK}"
    assert scrub("bare token-two") == f"bare {MASK}"
    assert scrub("secret-one-and-more") == MASK  # the longer secret first, whole


def test_short_values_are_settings_and_left_alone() -> None:
    scrub = Scrubber.of(
        McpServerSpec(name="s", transport=McpTransport.STDIO, env={"DEBUG": "1", "MODE": "on"})
    )

    assert scrub("exit 1 on start") == "exit 1 on start"


def test_failures_are_described() -> None:
    assert describe(TimeoutError(), STDIO, 2.5) == "did not answer within 2.5 s"
    assert describe(FileNotFoundError(2, "x"), STDIO, 1) == "command not found: srv"
    grouped = BaseExceptionGroup("g", [ExceptionGroup("h", [FileNotFoundError(2, "x")])])
    assert describe(grouped, STDIO, 1) == "command not found: srv"
    assert describe(MCPError(-32603, "boom"), STDIO, 1) == "the server answered with an error: boom"
    assert describe(MCPError(-32603, "boom"), HTTP, 1) == (
        "the server answered with an error: boom (http://x.test/mcp)"
    )
    refused = httpx2.ConnectError("All connection attempts failed")
    assert describe(refused, HTTP, 1) == (
        "cannot connect to http://x.test/mcp: All connection attempts failed"
    )
    assert describe(ValueError("odd"), STDIO, 1) == "ValueError: odd"


async def test_an_http_status_is_the_reason_when_the_sdk_hides_it() -> None:
    clues = Clues()
    request = httpx2.Request("POST", HTTP.url)
    await clues.response(httpx2.Response(200, request=request))
    await clues.response(httpx2.Response(401, request=request))

    described = describe(MCPError(-32603, "Server returned an error response"), HTTP, 1, clues)

    assert described == "HTTP 401 from http://x.test/mcp"


def test_the_stderr_tail_is_short_and_bounded() -> None:
    clues = Clues()
    for number in range(10):
        clues.feed(f"line {number}\n".encode())

    assert clues.text() == "line 5 / line 6 / line 7 / line 8 / line 9"
    clues.feed(b"no end " + b"y" * 10_000)
    assert len(clues.text()) == Clues.CHARACTERS


def test_leaf_finds_the_cause() -> None:
    error = ValueError("inner")
    assert leaf(ExceptionGroup("outer", [error])) is error


def test_servers_get_a_minimal_environment_with_their_own_over_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ours")
    monkeypatch.setenv("PATH", "/bin")
    spec = McpServerSpec(name="s", transport=McpTransport.STDIO, env={"TOKEN": "theirs"})

    environment = server_environment(spec)

    assert environment["TOKEN"] == "theirs" and environment["PATH"] == "/bin"
    assert "ANTHROPIC_API_KEY" not in environment
