"""An MCP server for the tests, on the official SDK's server side (mcp.server.mcpserver).

    python -m tests.support.mcp_server --transport stdio|http|sse [--port N] [--url-file F]

For http and sse it binds 127.0.0.1 (port 0 by default: the system picks one) and prints the
URL to connect to on stdout (and to --url-file when given) once it listens.

Ways to misbehave, for the failure tests:
  --exit-at-once       exit with status 3 before speaking (after printing --stderr to stderr)
  --hang               never answer anything (initialize included)
  --require-token X    http/sse: answer 401 unless the request has `Authorization: Bearer X`
  --stderr TEXT        write TEXT to stderr at start (e.g. to see that it is scrubbed)
  --colliding-tools    also offer tools `dup.name` and `dup_name` (the same once sanitised)
"""

import argparse
import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
from typing import Annotated, Any

import anyio
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    InputRequiredResult,
    ResourceLink,
    TextContent,
)
from mcp_types import TextResourceContents as TextResource
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


class Name(BaseModel):
    name: str


SIGN_IN_URL = "https://example.com/sign-in"
SIGN_IN_ID = "el-test-sign-in"


def _ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def build(*, colliding_tools: bool = False) -> MCPServer:
    server = MCPServer("test-server", log_level="WARNING")

    @server.tool(title="Echo", description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two numbers.\nA second line the title never shows.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="A tiny PNG image.")
    def image() -> Image:
        return Image(data=PNG, format="png")

    @server.tool(description="Always fails.")
    def fail() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="it went wrong")], is_error=True)

    @server.tool(description="Mixed content: a text resource, a link.")
    def mixed() -> CallToolResult:
        return CallToolResult(
            content=[
                EmbeddedResource(resource=TextResource(uri="file:///a.txt", text="inside a.txt")),
                ResourceLink(uri="file:///b.txt", name="b.txt"),
            ]
        )

    @server.tool(description="The value of an environment variable of the server.")
    def env(name: str) -> str:
        return os.environ.get(name, "<unset>")

    @server.tool(description="The server's working directory.")
    def cwd() -> str:
        return os.getcwd()

    @server.tool(description="Writes `marker` (a path), then sleeps until cancelled.")
    async def slow(marker: str) -> str:
        await anyio.Path(marker).write_text("started")
        await anyio.sleep_forever()
        return "never"

    @server.tool(description="Kills the server process.")
    def crash() -> str:
        os._exit(7)

    @server.tool(description="Starts a long-lived child process; returns its pid.")
    def spawn_child() -> str:
        child = subprocess.Popen(  # stays in the server's process group
            [sys.executable, "-c", "import time; time.sleep(600)"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return str(child.pid)

    @server.tool(description="The server's pid.")
    def pid() -> str:
        return str(os.getpid())

    @server.tool(description="Asks the user for their name (form elicitation).")
    def ask_name(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
        return f"accept: {answer.data.name}" if answer.action == "accept" else answer.action

    @server.tool(description="Sends the user to a page to sign in (url elicitation).")
    async def sign_in(ctx: Context) -> CallToolResult | InputRequiredResult:
        answered = (ctx.input_responses or {}).get("sign_in")
        if not isinstance(answered, ElicitResult):
            step = ElicitRequestURLParams(
                message="Sign in to continue.", url=SIGN_IN_URL, elicitation_id=SIGN_IN_ID
            )
            return InputRequiredResult(input_requests={"sign_in": ElicitRequest(params=step)})
        if answered.action == "accept":
            await ctx.session.send_elicit_complete(SIGN_IN_ID)
        return CallToolResult(content=[TextContent(text=answered.action)])

    @server.prompt(description="Review a file.")
    def review(file: str) -> list[Message]:
        return [
            UserMessage(f"Please review {file}."),
            AssistantMessage("Looking at it."),
            UserMessage(
                EmbeddedResource(resource=TextResource(uri=f"file:///{file}", text="file body"))
            ),
        ]

    if colliding_tools:
        server.add_tool(lambda: "first", name="dup.name", description="first of two")
        server.add_tool(lambda: "second", name="dup_name", description="second of two")
    return server


class RequireToken:
    """Answers 401 to any HTTP request without the expected bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and dict(scope["headers"]).get(b"authorization") != self.expected
        ):
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await self.app(scope, receive, send)


async def serve_http(server: MCPServer, args: argparse.Namespace) -> None:
    import uvicorn

    if args.transport == "http":
        app: Any = server.streamable_http_app()
        path = "/mcp"
    else:
        app = server.sse_app()
        path = "/sse"
    if args.require_token:
        app = RequireToken(app, args.require_token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)

    async def announce() -> None:
        while not http.started:
            await asyncio.sleep(0.01)
        if args.url_file:
            await anyio.Path(args.url_file).write_text(url)
        print(url, flush=True)

    announcing = asyncio.create_task(announce())
    await http.serve(sockets=[sock])
    await announcing


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--url-file", default="")
    parser.add_argument("--exit-at-once", action="store_true")
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--require-token", default="")
    parser.add_argument("--stderr", default="")
    parser.add_argument("--colliding-tools", action="store_true")
    args = parser.parse_args()
    if args.stderr:
        print(args.stderr, file=sys.stderr, flush=True)
    if args.exit_at_once:
        sys.exit(3)
    if args.hang:
        while True:
            time.sleep(60)
    server = build(colliding_tools=args.colliding_tools)
    if args.transport == "stdio":
        anyio.run(server.run_stdio_async)
    else:
        asyncio.run(serve_http(server, args))


if __name__ == "__main__":
    main()
