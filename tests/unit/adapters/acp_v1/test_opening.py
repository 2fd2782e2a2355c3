"""additionalDirectories and mcpServers as clients send them: each entry checked by name."""

from pathlib import Path
from typing import Any

import pytest

from adapters.acp_v1.opening import session_opening
from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from adapters.tools.base import locate
from domain.client_prompt import ClientPrompt, ClientPromptMode
from domain.mcp import McpServerSpec, McpTransport


def refused(params: dict[str, Any]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        session_opening(params)
    assert caught.value.code == INVALID_PARAMS
    return caught.value


def test_nothing_given_is_nothing_opened() -> None:
    opening = session_opening({"cwd": "/x"})
    assert (opening.additional_directories, opening.mcp_servers) == ((), ())


def test_directories_are_kept_in_order_once_each(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    opening = session_opening({"additionalDirectories": [str(b), f"{a}/", str(b)]})
    assert opening.additional_directories == (str(b), str(a))


@pytest.mark.parametrize(
    ("entry", "reason"),
    [("relative/dir", "not absolute"), (42, "not absolute"), ("/no/such/dir", "no such directory")],
)
def test_a_bad_directory_is_named(tmp_path: Path, entry: object, reason: str) -> None:
    error = refused({"additionalDirectories": [str(tmp_path), entry]})
    assert error.data == {"field": "additionalDirectories[1]", "path": entry, "reason": reason}
    assert "additionalDirectories[1]" in error.message


def test_a_file_is_not_a_directory(tmp_path: Path) -> None:
    file = tmp_path / "f.txt"
    file.write_text("x")
    assert refused({"additionalDirectories": [str(file)]}).data["reason"] == "no such directory"


def test_each_transport_becomes_a_spec_with_its_secrets_in_memory() -> None:
    opening = session_opening(
        {
            "mcpServers": [
                {
                    "name": "fs",
                    "command": "/bin/mcp-fs",
                    "args": ["--stdio"],
                    "env": [{"name": "TOKEN", "value": "t0p"}],
                },
                {
                    "type": "http",
                    "name": "api",
                    "url": "https://mcp.example.com/mcp",
                    "headers": [{"name": "Authorization", "value": "Bearer b"}],
                },
                {"type": "sse", "name": "events", "url": "http://127.0.0.1:9/sse", "headers": []},
            ]
        }
    )
    assert opening.mcp_servers == (
        McpServerSpec(
            name="fs",
            transport=McpTransport.STDIO,
            command="/bin/mcp-fs",
            args=("--stdio",),
            env={"TOKEN": "t0p"},
        ),
        McpServerSpec(
            name="api",
            transport=McpTransport.HTTP,
            url="https://mcp.example.com/mcp",
            headers={"Authorization": "Bearer b"},
        ),
        McpServerSpec(name="events", transport=McpTransport.SSE, url="http://127.0.0.1:9/sse"),
    )
    assert [s.stored() for s in opening.mcp_servers][1] == {
        "name": "api",
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "headers": ["Authorization"],
    }
    assert "t0p" not in repr(opening) and "Bearer b" not in repr(opening)


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"name": "x", "args": [], "env": []}, "is not a valid MCP server"),
        ({"type": "acp", "name": "x", "serverId": "s"}, "does not connect"),
        ({"type": "ws", "name": "x", "url": "ws://h"}, "does not connect"),
        ({"type": "http", "name": "x", "url": "ftp://h", "headers": []}, "http:// or https://"),
        ({"name": " ", "command": "c", "args": [], "env": []}, "needs a name"),
        ({"name": "x", "command": " ", "args": [], "env": []}, "needs a command"),
        ("not an object", "must be an object"),
    ],
)
def test_a_bad_server_is_named(entry: object, words: str) -> None:
    good = {"name": "ok", "command": "c", "args": [], "env": []}
    error = refused({"mcpServers": [good, entry]})
    assert error.data["field"] == "mcpServers[1]"
    assert words in error.message


def test_two_servers_may_not_share_a_name() -> None:
    server = {"name": "dup", "command": "c", "args": [], "env": []}
    assert refused({"mcpServers": [server, server]}).data == {
        "field": "mcpServers[1]",
        "name": "dup",
    }


def test_extra_directories_count_as_inside(tmp_path: Path) -> None:
    cwd, extra, elsewhere = tmp_path / "cwd", tmp_path / "extra", tmp_path / "elsewhere"
    for d in (cwd, extra, elsewhere):
        d.mkdir()
    (cwd / "link").symlink_to(elsewhere)
    assert locate(str(cwd), f"{extra}/a.py").outside
    assert not locate(str(cwd), f"{extra}/a.py", (str(extra),)).outside
    assert not locate(str(cwd), "../extra/sub/b.py", (str(extra),)).outside
    assert locate(str(cwd), "link/c.py", (str(extra),)).outside  # resolves elsewhere
    assert locate(str(cwd), f"{extra}/../elsewhere/d.py", (str(extra),)).outside


@pytest.mark.parametrize(
    "entry",
    [
        {"type": ["http"], "name": "x", "url": "http://h", "headers": []},
        {"type": {"k": 1}, "name": "x", "url": "http://h", "headers": []},
        {"type": None, "name": "x", "command": "c", "args": [], "env": []},
    ],
)
def test_a_type_that_is_not_a_string_is_named_not_crashed_on(entry: object) -> None:
    error = refused({"mcpServers": [entry]})
    assert error.data["field"] == "mcpServers[0]"


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "x", "command": "c", "args": [], "env": [{"name": "TOKEN", "value": 7}]},
        {"name": "x", "command": "c", "args": [], "env": [{"value": "s3cret-value"}]},
        {"type": "http", "name": "x", "url": "http://h", "headers": [{"value": "s3cret-value"}]},
        {"type": "sse", "name": "x", "url": 5, "headers": [{"name": "A", "value": "s3cret-value"}]},
    ],
)
def test_a_refused_entry_never_echoes_a_secret(entry: object) -> None:
    error = refused({"mcpServers": [entry]})
    assert "s3cret" not in error.message and "s3cret" not in repr(error.data)
    assert error.data["field"] == "mcpServers[0]"


@pytest.mark.parametrize("raw", ["/tmp", {"a": 1}, 3])
def test_lists_that_are_not_lists_are_named(raw: object) -> None:
    assert refused({"mcpServers": raw}).data["field"] == "mcpServers"
    assert refused({"additionalDirectories": raw}).data["field"] == "additionalDirectories"


def test_a_directory_with_a_nul_byte_is_refused_not_crashed_on() -> None:
    error = refused({"additionalDirectories": ["/tmp/a\0b"]})
    assert error.data["field"] == "additionalDirectories[0]"


def test_an_extra_directory_reached_through_a_symlink_counts_as_inside(tmp_path: Path) -> None:
    cwd, real = tmp_path / "cwd", tmp_path / "real"
    cwd.mkdir(), real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    (real / "out").symlink_to(tmp_path)  # a link inside the extra directory leading out
    alias = str(tmp_path / "alias")
    assert not locate(str(cwd), f"{real}/a.py", (alias,)).outside
    assert not locate(str(cwd), f"{alias}/a.py", (alias,)).outside
    assert locate(str(cwd), f"{alias}/out/cwd2/x", (alias,)).outside
    assert locate(str(cwd), f"{alias}/sub/../../x", (alias,)).outside
    # a directory whose name merely starts like the extra one is not inside it
    (tmp_path / "real2").mkdir()
    assert locate(str(cwd), f"{tmp_path}/real2/x", (str(real),)).outside


# --- systemPrompt ---


def test_a_system_prompt_is_read_with_its_blocks_in_order() -> None:
    opening = session_opening(
        {
            "systemPrompt": {
                "mode": "override",
                "content": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
                "_meta": {"x": 1},
            }
        }
    )
    assert opening.system_prompt == ClientPrompt(
        mode=ClientPromptMode.OVERRIDE, texts=("One.", "Two.")
    )


@pytest.mark.parametrize("given", [{}, {"systemPrompt": None}])
def test_no_system_prompt_is_none(given: dict[str, Any]) -> None:
    assert session_opening(given).system_prompt is None


@pytest.mark.parametrize(
    ("prompt", "data"),
    [
        (
            {"mode": "replace", "content": [{"type": "text", "text": "x"}]},
            {"field": "systemPrompt.mode", "mode": "replace", "supported": ["append", "override"]},
        ),
        (
            {"mode": "_ours", "content": [{"type": "text", "text": "x"}]},
            {"field": "systemPrompt.mode", "mode": "_ours", "supported": ["append", "override"]},
        ),
        (
            {"content": [{"type": "text", "text": "x"}]},
            {"field": "systemPrompt.mode", "supported": ["append", "override"]},
        ),
        ({"mode": "append", "content": []}, {"field": "systemPrompt.content"}),
        ({"mode": "append"}, {"field": "systemPrompt.content"}),
        (
            {
                "mode": "append",
                "content": [
                    {"type": "text", "text": "x"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                ],
            },
            {"field": "systemPrompt.content[1]", "type": "image", "supported": ["text"]},
        ),
        (
            {"mode": "append", "content": [{"type": "text"}]},
            {"field": "systemPrompt.content[0]"},
        ),
        ("be brief", {"field": "systemPrompt"}),
    ],
)
def test_a_system_prompt_that_cannot_be_used_is_refused_naming_why(
    prompt: object, data: dict[str, Any]
) -> None:
    error = refused({"systemPrompt": prompt})
    assert error.data == data
    assert data["field"] in error.message
