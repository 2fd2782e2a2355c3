"""The sign-in link `iac-code acp --transport http` prints once it listens (issue 33): on
the real process, its stderr a terminal (a pty) or a file; and the token the web client
sends as a WebSocket subprotocol never reaching the log, even at DEBUG."""

import asyncio
import base64
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx
import pytest

from adapters.http.log_redaction import redact
from bootstrap.sign_in_link import announcement, link_host, sign_in_link
from tests.e2e.conftest import IAC_CODE
from tests.support import children
from tests.support.patience import PATIENCE

TOKEN = "s3cret token/+&#=%é"  # every character a URL would misread
LINK = re.compile(r"web client: open (http://\S+)")


def test_the_token_is_percent_encoded_in_the_fragment() -> None:
    link = sign_in_link("http://127.0.0.1:8765", TOKEN)
    assert link == f"http://127.0.0.1:8765/#token={quote(TOKEN, safe='')}"
    parts = urlsplit(link)
    assert (parts.path, parts.query) == ("/", "")  # never the query: that is sent and logged
    assert sign_in_link("http://127.0.0.1:8765/", None) == "http://127.0.0.1:8765/"


def test_hosts_a_browser_can_use() -> None:
    assert link_host("::1", None) == "[::1]"
    assert link_host("127.0.0.1", None) == "127.0.0.1"
    assert link_host("0.0.0.0", frozenset({"agent.example"})) == "agent.example"
    assert link_host("::", None) not in ("::", "[::]", "")


def test_without_the_token_the_line_says_where_it_goes() -> None:
    line = announcement("http://h:1", TOKEN, show_token=False)
    assert TOKEN not in line and quote(TOKEN, safe="") not in line
    assert "http://h:1/ " in line and "IACCODE_ACP_HTTP_TOKEN" in line


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "IAC_CODE_CONFIG_DIR": str(tmp_path),
        "IAC_CODE_PROVIDER": "demo",
        "IAC_CODE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/sessions.db",
    }
    env.pop("IACCODE_ACP_HTTP_TOKEN", None)
    env.pop("IAC_CODE_ACP_HTTP_TOKEN", None)
    return env | extra


class Output:
    """What a child wrote on its stderr, read by a thread (a pty must be read, or the
    child blocks once its buffer is full)."""

    def __init__(self, fd: int) -> None:
        self.text = ""
        self._fd = fd
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:  # EIO: the pty's other end is closed
                return
            if not chunk:
                return
            with self._lock:
                self.text += chunk.decode(errors="replace")

    def wait_for(self, pattern: re.Pattern[str], process: "subprocess.Popen[bytes]") -> str:
        deadline = time.monotonic() + 2 * PATIENCE
        while True:
            with self._lock:
                match = pattern.search(self.text)
            if match:
                return match.group(1)
            assert process.poll() is None, f"the server exited:\n{self.text}"
            assert time.monotonic() < deadline, f"no sign-in link printed:\n{self.text}"
            time.sleep(0.05)

    def close(self) -> None:
        self._thread.join(10)
        os.close(self._fd)


@contextmanager
def server(env: dict[str, str], *, terminal: bool) -> Iterator[tuple[str, Output]]:
    """`iac-code acp --transport http --port 0` with its stderr a pty or a pipe; yields the
    link it printed and its output so far."""
    read_end, write_end = os.openpty() if terminal else os.pipe()
    argv = [IAC_CODE, "acp", "--transport", "http", "--port", "0"]
    process = children.start(argv, env=env, stdout=subprocess.DEVNULL, stderr=write_end)
    os.close(write_end)
    output = Output(read_end)
    try:
        yield output.wait_for(LINK, process), output
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(PATIENCE)
        output.close()


def healthy(link: str) -> bool:
    """The server answers at the link's origin, a browser's request from its own page."""
    parts = urlsplit(link)
    origin = f"{parts.scheme}://{parts.netloc}"
    answer = httpx.get(f"{origin}/healthz", headers={"Origin": origin}, timeout=PATIENCE)
    return answer.status_code == 200


@pytest.mark.e2e
def test_on_a_terminal_the_link_carries_the_token(tmp_path: Path) -> None:
    env = _env(tmp_path, IACCODE_ACP_HTTP_TOKEN=TOKEN)
    with server(env, terminal=True) as (link, _):
        parts = urlsplit(link)
        assert parts.hostname == "127.0.0.1" and parts.port not in (None, 0)
        assert (parts.path, parts.query) == ("/", "")
        assert parts.fragment == f"token={quote(TOKEN, safe='')}"
        assert healthy(link)  # the port printed is the one --port 0 chose


@pytest.mark.e2e
def test_stderr_that_is_not_a_terminal_never_gets_the_token(tmp_path: Path) -> None:
    env = _env(tmp_path, IACCODE_ACP_HTTP_TOKEN=TOKEN)
    with server(env, terminal=False) as (link, output):
        assert urlsplit(link).fragment == ""
        assert healthy(link)
    assert "IAC_CODE_HTTP_SIGN_IN_LINK=always" in output.text
    assert TOKEN not in output.text and quote(TOKEN, safe="") not in output.text


@pytest.mark.e2e
def test_always_prints_the_token_wherever_stderr_goes(tmp_path: Path) -> None:
    env = _env(tmp_path, IACCODE_ACP_HTTP_TOKEN=TOKEN, IAC_CODE_HTTP_SIGN_IN_LINK="always")
    with server(env, terminal=False) as (link, _):
        assert urlsplit(link).fragment == f"token={quote(TOKEN, safe='')}"


@pytest.mark.e2e
def test_never_keeps_it_off_a_terminal_too(tmp_path: Path) -> None:
    env = _env(tmp_path, IACCODE_ACP_HTTP_TOKEN=TOKEN, IAC_CODE_HTTP_SIGN_IN_LINK="never")
    with server(env, terminal=True) as (link, output):
        assert urlsplit(link).fragment == ""
    assert quote(TOKEN, safe="") not in output.text


@pytest.mark.e2e
def test_no_token_on_loopback_no_sign_in(tmp_path: Path) -> None:
    with server(_env(tmp_path), terminal=True) as (link, output):
        parts = urlsplit(link)
        assert link == f"http://127.0.0.1:{parts.port}/"
        assert healthy(link)
    assert "#token" not in output.text


@pytest.mark.e2e
def test_a_wrong_setting_stops_the_server(tmp_path: Path) -> None:
    env = _env(tmp_path, IAC_CODE_HTTP_SIGN_IN_LINK="sometimes")
    argv = [IAC_CODE, "acp", "--transport", "http", "--port", "0"]
    result = subprocess.run(argv, env=env, capture_output=True, timeout=PATIENCE, check=False)
    assert result.returncode == 2
    assert b"IAC_CODE_HTTP_SIGN_IN_LINK must be one of auto, always, never" in result.stderr


def encoded(token: str) -> str:
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


async def handshake(origin: str, protocols: str) -> int:
    """A browser's WebSocket handshake on /acp offering `protocols`; the status answered."""
    parts = urlsplit(origin)
    assert parts.hostname is not None and parts.port is not None
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    request = (
        "GET /acp HTTP/1.1\r\n"
        f"Host: {parts.netloc}\r\n"
        f"Origin: {origin}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Protocol: {protocols}\r\n\r\n"
    )
    writer.write(request.encode())
    async with asyncio.timeout(PATIENCE):
        status_line = await reader.readline()
    writer.close()
    return int(status_line.split()[1])


@pytest.mark.e2e
def test_the_subprotocol_token_never_reaches_the_log_even_at_debug(tmp_path: Path) -> None:
    env = _env(tmp_path, IACCODE_ACP_HTTP_TOKEN=TOKEN, IAC_CODE_LOG_LEVEL="DEBUG")
    wrong = "not-the-token-4d1f"
    with server(env, terminal=False) as (link, output):
        origin = link.rstrip("/")
        statuses = [
            asyncio.run(handshake(origin, f"acp, iac-code.bearer.{encoded(TOKEN)}")),
            asyncio.run(handshake(origin, f"iac-code.bearer.{encoded(wrong)}, acp")),
            asyncio.run(handshake(origin, f"acp, iac-code.bearer.{TOKEN.replace(' ', '')}")),
        ]
        assert all(status in (101, 400, 401) for status in statuses), statuses
    text = output.text
    # The header lines are written (websockets at DEBUG), with the token left out.
    assert re.search(r"< sec-websocket-protocol: .*iac-code\.bearer\.\[redacted\]", text, re.I)
    for secret in (encoded(TOKEN), encoded(wrong), TOKEN.replace(" ", ""), quote(TOKEN)):
        assert secret not in text


def test_redaction_of_a_subprotocol_anywhere_in_a_line() -> None:
    assert (
        redact(f"< sec-websocket-protocol: acp, iac-code.bearer.{encoded(TOKEN)}")
        == "< sec-websocket-protocol: acp, iac-code.bearer.[redacted]"
    )
    assert (
        redact("invalid header 'IAC-CODE.BEARER.abc;x' in handshake")
        == "invalid header 'IAC-CODE.BEARER.[redacted];x' in handshake"
    )


DIST = Path(__file__).resolve().parents[2] / "adapters" / "http" / "web_client" / "dist"
CHROMIUM = Path("/usr/bin/chromium")
# ASCII (the official client sends it in an Authorization header), still URL-hostile.
HEADER_TOKEN = "tok/+&#=%?x"


async def make_session(link: str, token: str, cwd: Path) -> None:
    """One stored session in `cwd`, made by the official ACP client (HTTP + SSE)."""
    from acp import PROTOCOL_VERSION, connect_to_agent
    from acp.http import create_http_stream
    from acp.schema import ClientCapabilities, Implementation

    class Silent:
        async def session_update(self, session_id: str, update: object, **_: object) -> None:
            pass

    base = link.split("#", 1)[0].rstrip("/")
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=PATIENCE, headers=headers) as http:
        transport = create_http_stream(f"{base}/acp", client=http)
        conn = connect_to_agent(Silent(), transport)  # type: ignore[arg-type]
        try:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="link-test", version="1"),
            )
            await conn.new_session(cwd=str(cwd), mcp_servers=[])
        finally:
            await conn.close()
            await transport.close()


@pytest.mark.e2e
@pytest.mark.skipif(not (DIST / "index.html").is_file(), reason="no web client built")
@pytest.mark.skipif(  # in CI (.ci/run installs it) a missing browser fails the test
    not CHROMIUM.exists() and not os.environ.get("CI"), reason="no /usr/bin/chromium"
)
def test_the_printed_link_signs_a_browser_in(tmp_path: Path) -> None:
    """Chromium opens the link as printed: the page takes the token from the fragment,
    drops it from the address bar, and lists the session over its signed-in WebSocket."""
    from playwright.sync_api import sync_playwright

    project = tmp_path / "project-listed"
    project.mkdir()
    env = _env(tmp_path, IACCODE_ACP_HTTP_TOKEN=HEADER_TOKEN)
    with server(env, terminal=True) as (link, _):
        asyncio.run(make_session(link, HEADER_TOKEN, project))  # before Playwright's own loop
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
            try:
                page = browser.new_page()
                page.goto(link)
                sessions = page.get_by_role("list", name="Sessions")
                listed = sessions.get_by_role("listitem").filter(has_text=project.name)
                listed.wait_for(timeout=PATIENCE * 1000)
                assert "token" not in page.url
            finally:
                browser.close()
