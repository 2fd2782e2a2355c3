"""Why a server failed, said plainly (the caller scrubs secrets from it)."""

import httpx2
from mcp.shared.exceptions import MCPError

from adapters.mcp.transports import Clues
from domain.mcp import McpServerSpec, McpTransport


def describe(
    error: BaseException, spec: McpServerSpec, timeout: float, clues: Clues | None = None
) -> str:
    error = leaf(error)
    match error:
        case TimeoutError():
            return f"did not answer within {timeout:g} s"
        case FileNotFoundError() if spec.transport is McpTransport.STDIO:
            return f"command not found: {spec.command}"
        case PermissionError() if spec.transport is McpTransport.STDIO:
            return f"command not executable: {spec.command}"
        case httpx2.HTTPStatusError():
            return f"HTTP {error.response.status_code} from {spec.url}"
        case httpx2.ConnectError():
            return f"cannot connect to {spec.url}: {error}"
        case httpx2.TransportError():
            return f"cannot reach {spec.url}: {error}"
        case MCPError() if spec.transport is McpTransport.STDIO:
            return f"the server answered with an error: {error.message}"
        case MCPError() if clues is not None and clues.http_status is not None:
            return f"HTTP {clues.http_status} from {spec.url}"
        case MCPError():
            return f"the server answered with an error: {error.message} ({spec.url})"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def leaf(error: BaseException) -> BaseException:
    """The first real cause inside the exception groups anyio's task groups raise."""
    while isinstance(error, BaseExceptionGroup):
        inner = [e for e in error.exceptions if not isinstance(e, GeneratorExit)]
        error = inner[0] if inner else error.exceptions[0]
    return error
