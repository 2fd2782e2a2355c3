"""Regression tests for hardening finding 6: web_fetch asks before reaching private addresses or
leaking queries, against a local HTTP server on 127.0.0.1 (names are mapped to it by a
resolver stub; no traffic ever leaves the machine)."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from adapters.tools.base import Limits, ToolInputError
from adapters.tools.network import address_kind
from adapters.tools.runner import LocalToolRunner
from adapters.tools.web import WebFetch
from application.ports.tools import ToolContext, ToolResult
from tests.integration.tools_hardening.support import ctx, nothing

pytestmark = pytest.mark.integration


class _Site(BaseHTTPRequestHandler):
    hits: list[str] = []  # shared by the handler instances of one test

    def do_GET(self) -> None:
        _Site.hits.append(f"{self.headers['Host']}{self.path}")
        port = self.server.server_address[1]
        redirects = {
            "/to-private": f"http://internal.test:{port}/page",
            "/to-new-host-query": f"http://other.test:{port}/page?secret=1",
            "/to-same-host": "/page?from=redirect",
            "/to-file": "file:///etc/passwd",
            "/loop": "/loop",
        }
        if self.path in redirects:
            self.send_response(302)
            self.send_header("Location", redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = f"<p>page {self.path} for {self.headers['Host']}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[int]:
    _Site.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


NAMES = {"public.test": "127.0.0.1", "other.test": "127.0.0.1", "internal.test": "127.0.0.2"}


async def stub_resolve(host: str, port: int) -> tuple[str, ...]:
    if host not in NAMES:
        raise OSError(f"{host}: unknown in this test")
    return (NAMES[host],)


def stub_classify(address: str) -> str | None:
    """127.0.0.1 plays a public address (the local server behind the fake public names);
    everything else is judged as for real (127.0.0.2 is loopback)."""
    return None if address == "127.0.0.1" else address_kind(address)


def stub_web() -> WebFetch:
    return WebFetch(Limits(fetch_chars=500, fetch_bytes=4_096), stub_resolve, stub_classify)


async def fetch(web: WebFetch, url: str, session: str = "s1") -> tuple[str | None, ToolResult]:
    context = ToolContext(cwd="/", model="m", session_id=session)
    plan = await web.plan({"url": url}, context)
    assert plan.problem is None, plan.problem
    return plan.ask_reason, await web.run({"url": url}, context, nothing)


async def test_finding_6_web_fetch_of_loopback_asks(
    runner: LocalToolRunner, project: Path, site: int
) -> None:
    for url in (f"http://127.0.0.1:{site}/page", f"http://localhost:{site}/page"):
        plan = await runner.plan("web_fetch", {"url": url}, ctx(project))
        assert plan.ask_reason is not None and "loopback address" in plan.ask_reason
        assert plan.always_asks
    for address, kind in (
        ("169.254.169.254", "link-local"),
        ("10.1.2.3", "private"),
        ("192.168.0.1", "private"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fe80::1%eth0", "link-local"),
        ("100.64.0.1", "non-public"),
        ("93.184.216.34", None),
    ):
        assert address_kind(address) == kind, address
    # asked and allowed: the fetch goes to the address that was checked
    result = await runner.run(
        "web_fetch", {"url": f"http://127.0.0.1:{site}/page"}, ctx(project), nothing
    )
    assert result.text == f"page /page for 127.0.0.1:{site}"


async def test_finding_6_plain_public_gets_stay_allowed_and_queries_to_new_hosts_ask(
    site: int,
) -> None:
    web = stub_web()
    reason, page = await fetch(web, f"http://public.test:{site}/page")
    assert reason is None
    assert page.text == f"page /page for public.test:{site}"  # name kept in Host, pinned address
    reason, _ = await fetch(web, f"http://other.test:{site}/page?q=secret")
    assert reason is not None and "query string to other.test" in reason
    reason, _ = await fetch(web, f"http://public.test:{site}/page?q=1")
    assert reason is None  # fetched before in this session
    reason, _ = await fetch(web, f"http://public.test:{site}/page?q=1", session="s2")
    assert reason is not None  # another session has fetched nothing
    reason, _ = await fetch(web, f"http://internal.test:{site}/page")
    assert reason == "internal.test resolves to 127.0.0.2, which is a loopback address"


async def test_finding_6_redirects_needing_permission_are_not_followed(site: int) -> None:
    web = stub_web()
    _, private = await fetch(web, f"http://public.test:{site}/to-private")
    assert not private.is_error
    assert f"redirects to http://internal.test:{site}/page, which was not fetched" in private.text
    assert "loopback address" in private.text
    _, query = await fetch(web, f"http://public.test:{site}/to-new-host-query")
    assert "other.test" in query.text and "query string" in query.text
    assert query.raw_output["followed"] is False
    _, same = await fetch(web, f"http://public.test:{site}/to-same-host")
    assert same.text == f"page /page?from=redirect for public.test:{site}"
    _, scheme = await fetch(web, f"http://public.test:{site}/to-file")
    assert "not an http(s) URL" in scheme.text
    _, loop = await fetch(web, f"http://public.test:{site}/loop")
    assert loop.is_error and "redirects" in loop.text
    assert all(not hit.startswith(("internal.test", "other.test")) for hit in _Site.hits)


async def test_finding_6_a_run_without_its_plan_fetches_nothing_that_needs_asking(
    site: int,
) -> None:
    web = stub_web()
    context = ToolContext(cwd="/", model="m", session_id="s1")
    result = await web.run({"url": f"http://internal.test:{site}/page"}, context, nothing)
    assert result.is_error and "was not fetched" in result.text
    assert _Site.hits == []


async def test_finding_6_unresolvable_hosts_fail_before_asking() -> None:
    with pytest.raises(ToolInputError, match=r"Cannot resolve nowhere\.test"):
        await stub_web().plan({"url": "http://nowhere.test/"}, ToolContext(cwd="/", model="m"))
