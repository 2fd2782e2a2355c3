"""The one way out of a sandbox whose network is `allowlist`: an HTTP proxy the server runs
on a Unix socket, bound into each such sandbox (its own network namespace has no other
route), which lets through only the hosts and ports the operator listed
(`IAC_CODE_SANDBOX_ALLOW`) — `CONNECT host:port` for HTTPS and anything else tunnelled,
absolute-form requests for plain HTTP — and answers the rest with a 403 that says why.

A listed name that resolves to a loopback address is refused unless the entry itself names
a loopback host (`localhost`, `127.0.0.1`, `[::1]`), and the server's own ports are refused
whatever is listed: a command must not reach the server's API, nor another local service,
through a name made to point there."""

import asyncio
import atexit
import contextlib
import ipaddress
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024
HEAD_SECONDS = 30.0
CONNECT_SECONDS = 10.0
DEFAULT_PORTS = (80, 443)
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


@dataclass(frozen=True, slots=True)
class Entry:
    """One `host[:port]` of the allow list; `*.example.com` also takes its subdomains."""

    host: str
    ports: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> "Entry":
        text = text.strip().lower()
        host, sep, port = text.rpartition(":") if not text.endswith("]") else (text, "", "")
        if not sep or not port.isdigit():
            host, port = text, ""
        return cls(host=host, ports=(int(port),) if port else DEFAULT_PORTS)

    def takes(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        if self.host.startswith("*."):
            return host == self.host[2:] or host.endswith(self.host[1:])
        return host == self.host

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK_NAMES


class AllowList:
    def __init__(self, entries: Iterable[str], own_ports: Iterable[int] = ()) -> None:
        self._entries = tuple(Entry.parse(e) for e in entries if e.strip())
        self._own_ports = frozenset(own_ports)

    async def verdict(self, host: str, port: int) -> tuple[str | None, str]:
        """(an address to connect to, "") or (None, why not)."""
        host = host.strip().lower().strip("[]")
        entry = next((e for e in self._entries if e.takes(host, port)), None)
        if entry is None:
            return None, f"{host}:{port} is not on the sandbox's allow list"
        try:
            found = await asyncio.get_running_loop().getaddrinfo(host, port)
        except OSError as exc:
            return None, f"{host} does not resolve ({exc.strerror or exc})"
        for *_, address in found:
            ip = ipaddress.ip_address(address[0])
            if ip.is_loopback and port in self._own_ports:
                return None, f"{host}:{port} is the server's own port"
            if ip.is_loopback and not entry.loopback:
                return None, f"{host} resolves to a loopback address, which is not listed"
            if ip.is_unspecified or ip.is_multicast:
                return None, f"{host} resolves to {ip}, which is not a host"
        return str(ipaddress.ip_address(found[0][4][0])), ""


class EgressProxy:
    """Started on first use, one per server process; its socket lives in a private
    directory and is removed with it when the server stops."""

    def __init__(self, allow: AllowList) -> None:
        self._allow = allow
        self._server: asyncio.AbstractServer | None = None
        self._directory: str | None = None
        self._starting = asyncio.Lock()

    async def socket_path(self) -> str:
        async with self._starting:
            if self._server is None:
                self._directory = tempfile.mkdtemp(prefix="iac-code-egress-")
                # Gone with the server, however its loop ends (close() says so earlier).
                atexit.register(shutil.rmtree, self._directory, True)
                path = os.path.join(self._directory, "proxy.sock")
                self._server = await asyncio.start_unix_server(self._serve, path=path)
                os.chmod(path, 0o600)
            assert self._directory is not None
            return os.path.join(self._directory, "proxy.sock")

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)  # a socket and its directory
            self._directory = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._relay(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        except ValueError as exc:
            await _refuse(writer, 400, f"not an HTTP proxy request ({exc})")
        finally:
            writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
        if len(head) > HEAD_LIMIT:
            raise ValueError("the request's head is too long")
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        host, port, forwarded = _destination(method, target, version, rest)
        address, why = await self._allow.verdict(host, port)
        if address is None:
            log.info("egress refused: %s", why)
            await _refuse(writer, 403, why)
            return
        upstream_reader, upstream_writer = await asyncio.wait_for(
            asyncio.open_connection(address, port), CONNECT_SECONDS
        )
        try:
            if forwarded is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:
                upstream_writer.write(forwarded)
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            upstream_writer.close()


def _destination(
    method: str, target: str, version: str, rest: bytes
) -> tuple[str, int, bytes | None]:
    """(host, port, the request to send on: None for a tunnel)."""
    if method.upper() == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"CONNECT needs host:port, got {target!r}")
        return host, int(port), None
    parts = urlsplit(target)
    if parts.scheme.lower() != "http" or not parts.hostname:
        raise ValueError("a plain request must name its URL (http://host/...)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    request = f"{method} {path} {version}\r\n".encode("latin-1") + rest
    return parts.hostname, parts.port or 80, request


async def _pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            target.write(data)
            await target.drain()
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if target.can_write_eof():
                target.write_eof()


async def _refuse(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden"}[status]
    body = f"iac-code sandbox: {why}. Only the hosts the server allows are reachable.\n"
    data = body.encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\nX-Iac-Code-Sandbox: refused\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        writer.write(head.encode() + data)
        await writer.drain()
