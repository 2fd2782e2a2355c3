"""A cluster on one machine: `iac-code` replicas on loopback ports behind nginx, run the way
the deployment runs them (docker-compose.yml's replica command, deploy/nginx's template),
and a plain ACP-over-HTTP client. Shared by tests/cluster and bench/cluster.py.

nginx runs as a non-root program would: `nginx -p <dir> -c <dir>/nginx.conf`, its pid file,
logs and temporary files in that directory, in the foreground.

Kept whole (over 400 lines): the replicas, the balancer and the client are started from one
directory layout and die together; the harness reads as one story of how a cluster runs.
"""

import asyncio
import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from deploy.nginx_conf import Replica as Upstream
from deploy.nginx_conf import render
from tests.e2e.conftest import IAC_CODE
from tests.http.container import compose
from tests.http.walkthrough import free_port
from tests.support import children

ROOT = Path(__file__).resolve().parents[2]
ENSURE_NGINX = ROOT / "scripts" / "ensure-nginx"
COMPOSE_REPLICAS = ("replica-a", "replica-b")  # docker-compose.yml's services
START_SECONDS = 90.0  # a replica's start: migrations (one at a time) and the agent's imports


# -- nginx ------------------------------------------------------------------------------------


def nginx_binary() -> str | None:
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def ensure_nginx() -> tuple[str | None, str]:
    """nginx's path, after scripts/ensure-nginx if it was missing; else None and why."""
    if (found := nginx_binary()) is not None:
        return found, ""
    result = subprocess.run(
        [str(ENSURE_NGINX)], capture_output=True, text=True, timeout=600, check=False
    )
    if (found := nginx_binary()) is not None:
        return found, ""
    why = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
    return None, f"nginx is not installed and scripts/ensure-nginx failed: {why[0]}"


# nginx's own record of each request: which replica served it, for which connection id
# (`sent` by the client, `given` in the replica's answer to an initialize or a stream; ""
# when none) and session stream.
_MAIN_CONF = """\
{user}worker_processes {workers};
error_log {prefix}/logs/error.log warn;
pid {prefix}/nginx.pid;
events {{
    worker_connections 8192;
}}
http {{
    log_format routed escape=json '{{"method": "$request_method", "status": "$status", '
                      '"upstream": "$upstream_addr", "sent": "$http_acp_connection_id", '
                      '"given": "$sent_http_acp_connection_id", '
                      '"session": "$http_acp_session_id"}}';
    access_log {prefix}/logs/access.log routed;
    client_body_temp_path {prefix}/temp/body;
    proxy_temp_path {prefix}/temp/proxy;
    fastcgi_temp_path {prefix}/temp/fastcgi;
    uwsgi_temp_path {prefix}/temp/uwsgi;
    scgi_temp_path {prefix}/temp/scgi;
    include {site};
}}
"""


@dataclass
class Nginx:
    process: subprocess.Popen[bytes]
    port: int
    prefix: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[dict[str, str]]:
        """nginx's access log: one entry per finished request."""
        return [json.loads(line) for line in _whole_lines(self.prefix / "logs" / "access.log")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # finish open requests, then exit
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)


def start_nginx(binary: str, prefix: Path, replicas: list[Upstream], workers: int = 1) -> Nginx:
    """nginx on a free loopback port, serving deploy/nginx's template for these replicas."""
    for folder in ("logs", "temp"):
        (prefix / folder).mkdir(parents=True, exist_ok=True)
    port = free_port()
    site = prefix / "iac-code.conf"
    site.write_text(render(replicas, listen=f"127.0.0.1:{port}"))
    conf = prefix / "nginx.conf"
    # The workers run as whoever runs this, as in a non-root run. Started by root, nginx
    # would make them `nobody`, who cannot enter the private temporary directory where
    # request bodies are kept on their way.
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
    text = _MAIN_CONF.format(user=user, workers=workers, prefix=prefix, site=site)
    conf.write_text(text)
    argv = [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "logs/error.log")]
    checked = subprocess.run([*argv, "-t"], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    with (prefix / "logs" / "stderr.log").open("wb") as stderr:
        # SIGTERM when the session dies: the master then takes its workers down with it.
        process = children.start([*argv, "-g", "daemon off;"], signal.SIGTERM, stderr=stderr)
    nginx = Nginx(process, port, prefix)
    _wait_until(
        lambda: _answers(f"{nginx.url}/healthz"),
        process,
        lambda: (prefix / "logs" / "error.log").read_text(),
        "nginx did not come up",
    )
    return nginx


# -- replicas ---------------------------------------------------------------------------------


def replica_command(host: str, port: int) -> list[str]:
    """docker-compose.yml's replica command (the same for each), on this host and port."""
    command: list[str] = compose()["services"][COMPOSE_REPLICAS[0]]["command"]
    return [host if a == "0.0.0.0" else str(port) if a == "8765" else a for a in command]


@dataclass
class Replica:
    id: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def upstream(self) -> Upstream:
        return Upstream(self.id, f"127.0.0.1:{self.port}")

    def requests(self) -> list[dict[str, Any]]:
        """The replica's access log (a JSON line per finished request, on stderr)."""
        return [
            json.loads(line[line.index("{") :])
            for line in _whole_lines(self.log)
            if '"event": "http"' in line
        ]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(15)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)


def replica_env(
    replica_id: str, home: Path, database_url: str, token: str, extra: dict[str, str]
) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "IAC_CODE_CONFIG_DIR": str(home),
        "IAC_CODE_DATABASE_URL": database_url,
        "IAC_CODE_REPLICA_ID": replica_id,
        "IACCODE_ACP_HTTP_TOKEN": token,
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_LOG_LEVEL": "INFO",
        **extra,
    }


def start_replica(
    replica_id: str, root: Path, database_url: str, token: str, extra: dict[str, str]
) -> Replica:
    home = root / replica_id
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = home / "stderr.log"
    env = replica_env(replica_id, home, database_url, token, extra)
    with log.open("wb") as stderr:
        process = children.start(
            [IAC_CODE, *replica_command("127.0.0.1", port)],
            env=env,
            cwd=home,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    return Replica(replica_id, port, process, log)


def wait_until_ready(replica: Replica) -> None:
    """Until /readyz answers 200: migrated, and the agent loaded."""
    _wait_until(
        lambda: _answers(f"{replica.url}/readyz"),
        replica.process,
        lambda: replica.log.read_text(errors="replace"),
        f"replica {replica.id} did not become ready",
    )


# -- the cluster ------------------------------------------------------------------------------


@dataclass
class Cluster:
    nginx: Nginx
    replicas: dict[str, Replica]
    token: str

    @property
    def url(self) -> str:
        return self.nginx.url

    def replica_of(self, connection_id: str) -> Replica:
        """The replica a connection id names (its prefix)."""
        return self.replicas[connection_id.split(".", 1)[0]]


@contextlib.contextmanager
def running_cluster(
    nginx: str,
    root: Path,
    database_url: str,
    replicas: int = 2,
    env: dict[str, str] | None = None,
) -> Iterator[Cluster]:
    """`replicas` replicas (ids r1, r2, ...) on one database, nginx in front; all stopped
    on exit. `env` adds to or overrides the replicas' environment."""
    token = f"cluster-{uuid.uuid4().hex}"
    started: list[Replica] = []
    proxy: Nginx | None = None
    try:
        for n in range(1, replicas + 1):
            started.append(start_replica(f"r{n}", root, database_url, token, env or {}))
        for replica in started:
            wait_until_ready(replica)
        proxy = start_nginx(nginx, root / "nginx", [r.upstream for r in started])
        yield Cluster(proxy, {r.id: r for r in started}, token)
    finally:
        if proxy is not None:
            proxy.stop()
        for replica in started:
            replica.stop()


def sqlite_url(root: Path) -> str:
    return f"sqlite+aiosqlite:///{root / 'sessions.db'}"


@contextlib.contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    """A new, uniquely named database on the server of `admin_url`, dropped on exit; yields
    its URL (the driver of `admin_url`). Made and dropped with psql."""
    parts = urlsplit(admin_url)
    name = f"iac_cluster_{uuid.uuid4().hex[:12]}"
    psql = [
        "psql",
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        parts.hostname or "127.0.0.1",
        "-p",
        str(parts.port or 5432),
        "-U",
        parts.username or "postgres",
        "-d",
        parts.path.lstrip("/") or "postgres",
    ]
    env = {**os.environ, "PGPASSWORD": parts.password or ""}
    subprocess.run([*psql, "-c", f"CREATE DATABASE {name}"], env=env, check=True, timeout=60)
    try:
        yield parts._replace(path=f"/{name}").geturl()
    finally:
        drop = f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        subprocess.run([*psql, "-c", drop], env=env, check=True, timeout=60)


def _whole_lines(path: Path) -> list[str]:
    """A log's lines, but for one still being written (a process writes as we read)."""
    return path.read_text(errors="replace").split("\n")[:-1]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _wait_until(condition: Any, process: subprocess.Popen[bytes], log: Any, failure: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not condition():
        assert process.poll() is None, f"{failure}: it exited\n{log()}"
        assert time.monotonic() < deadline, f"{failure} within {START_SECONDS:g} s\n{log()}"
        time.sleep(0.05)


# -- a client ---------------------------------------------------------------------------------


class ConnectionLost(Exception):
    """The connection's stream ended or broke before the awaited response came."""


@dataclass
class AcpClient:
    """ACP over HTTP + SSE, spoken in plain JSON-RPC: `initialize` by POST, every later
    message by POST with the connection id, everything the agent sends read from the
    connection's stream (GET) by a task of its own. Permission requests are allowed once.
    Each prompt's and load's `session/update`s come before its response, so `updates`
    taken between a call's start and its response are that call's, but for what no call
    asked for: a notice (e.g. that a dead replica's turn ended) numbered before the call
    began can still reach the client after it was sent. `capabilities` are the
    `clientCapabilities` sent."""

    http: httpx.AsyncClient
    base: str
    token: str
    id: str | None = None
    updates: list[dict[str, Any]] = field(default_factory=list)
    _pending: dict[int, "asyncio.Future[dict[str, Any]]"] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: iter(range(1, 10**9)))
    _reader: "asyncio.Task[None] | None" = None
    lost: BaseException | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"{self.base}/acp"

    def _headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}"}
        if self.id is not None:
            headers["Acp-Connection-Id"] = self.id
        return headers

    async def open(self) -> dict[str, Any]:
        """`initialize`, then the stream: returns the initialize result."""
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": self.capabilities},
        }
        response = await self.http.post(self.url, json=hello, headers=self._headers())
        if response.status_code != 200:
            raise ConnectionLost(f"initialize: HTTP {response.status_code} {response.text}")
        self.id = response.headers["acp-connection-id"]
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read(opened))
        await opened
        result: dict[str, Any] = response.json()["result"]
        return result

    async def call(
        self, method: str, params: dict[str, Any], timeout: float = 120
    ) -> dict[str, Any]:
        """The response message (with `result` or `error`); ConnectionLost if none comes."""
        if self.lost is not None:
            raise ConnectionLost(f"the connection was lost before {method}: {self.lost}")
        request_id = next(self._ids)
        answer = self._pending[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self._post(message)
        try:
            return await asyncio.wait_for(answer, timeout)
        finally:
            self._pending.pop(request_id, None)

    async def close(self) -> None:
        """DELETE the connection (if its replica still answers), and stop reading."""
        if self.lost is None and self.id is not None:
            with contextlib.suppress(httpx.HTTPError):
                await self.http.delete(self.url, headers=self._headers())
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    async def _post(self, message: dict[str, Any]) -> None:
        try:
            response = await self.http.post(self.url, json=message, headers=self._headers())
        except httpx.TransportError as exc:
            raise ConnectionLost(f"POST failed: {exc!r}") from exc
        if response.status_code != 202:
            raise ConnectionLost(f"POST answered {response.status_code}: {response.text[:200]}")

    async def _read(self, opened: "asyncio.Future[None]") -> None:
        try:
            timeout = httpx.Timeout(30, read=None)
            headers = self._headers()
            async with self.http.stream("GET", self.url, headers=headers, timeout=timeout) as r:
                if r.status_code != 200:
                    raise ConnectionLost(f"GET answered {r.status_code}")
                opened.set_result(None)
                async for line in r.aiter_lines():
                    if line.startswith("data:"):
                        await self._receive(json.loads(line[5:]))
            raise ConnectionLost("the stream ended")
        except (ConnectionLost, httpx.HTTPError) as exc:
            self._lose(exc, opened)
        except asyncio.CancelledError:
            self._lose(ConnectionLost("closed by the client"), opened)
            raise

    def _lose(self, why: BaseException, opened: "asyncio.Future[None]") -> None:
        self.lost = why
        if not opened.done():
            opened.set_exception(ConnectionLost(f"no stream: {why!r}"))
        for waiting in self._pending.values():
            if not waiting.done():
                waiting.set_exception(ConnectionLost(repr(why)))

    async def _receive(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            waiting = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
        elif "id" in message:  # the agent asks: allow what it asks permission for
            await self._post({"jsonrpc": "2.0", "id": message["id"], "result": _allow(message)})
        elif message["method"] == "session/update":
            self.updates.append(message["params"])


def _allow(request: dict[str, Any]) -> dict[str, Any]:
    options = request.get("params", {}).get("options", [])
    chosen = next((o["optionId"] for o in options if o.get("kind") == "allow_once"), None)
    return {"outcome": {"outcome": "selected", "optionId": chosen}} if chosen else {}


def text_of(updates: list[dict[str, Any]], kind: str, session_id: str | None = None) -> str:
    """The text of every `kind` update (e.g. agent_message_chunk), joined, in order."""
    return "".join(
        update["update"]["content"].get("text", "")
        for update in updates
        if update["update"].get("sessionUpdate") == kind
        and (session_id is None or update["sessionId"] == session_id)
        and isinstance(update["update"].get("content"), dict)
    )


BUSY = re.compile(r"running|busy", re.IGNORECASE)


def is_busy(response: dict[str, Any]) -> bool:
    """The answer to a prompt (or load) while another replica's turn holds the session."""
    error = response.get("error") or {}
    return error.get("code") == -32602 and bool(BUSY.search(str(error.get("message", ""))))
