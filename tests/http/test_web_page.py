"""The browser client as the HTTP transport serves it (GET /, /assets/*: the committed
build, its caching and its Content-Security-Policy) and the WebSocket sign-in browsers can
make: the bearer token in the subprotocol list, the server selecting `acp`."""

import base64
import json
import re
from pathlib import Path

import httpx
import pytest
import websockets
from fastapi import FastAPI
from websockets.asyncio.client import connect

from adapters.http.auth import subprotocol_token
from adapters.http.web_page import DIST, web_page_router
from tests.http.conftest import INITIALIZE, Serve, running

pytestmark = pytest.mark.integration


def bearer(token: str) -> str:
    encoded = base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")
    return f"iac-code.bearer.{encoded}"


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/acp"


async def test_the_page_is_served_without_the_token_with_a_strict_policy(serve_fake: Serve) -> None:
    async with serve_fake(token="s3cret") as base, httpx.AsyncClient() as http:
        page = await http.get(f"{base}/")
        [script] = re.findall(r'src="(assets/app-[A-Za-z0-9]+\.js)"', page.text)
        [style] = re.findall(r'href="(assets/app-[A-Za-z0-9]+\.css)"', page.text)
        js = await http.get(f"{base}/{script}")
        css = await http.get(f"{base}/{style}")
        acp = await http.get(f"{base}/acp")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["cache-control"] == "no-cache"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    policy = dict(
        directive.split(" ", 1) for directive in page.headers["content-security-policy"].split("; ")
    )
    host = base.removeprefix("http://")
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'"  # nothing inline, nothing remote
    assert policy["connect-src"] == f"'self' ws://{host} wss://{host}"
    assert policy["frame-ancestors"] == "'none'"
    assert "unsafe" not in page.headers["content-security-policy"]
    for asset, kind in ((js, "text/javascript"), (css, "text/css")):
        assert asset.status_code == 200
        assert asset.headers["content-type"].startswith(kind)
        assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert acp.status_code == 401  # /acp stays behind the token


async def test_only_built_assets_are_served(serve_fake: Serve) -> None:
    names = ["missing-1234.js", "..%2Fweb_page.py", "index.html", "app.ts"]
    async with serve_fake() as base, httpx.AsyncClient() as http:
        answers = [await http.get(f"{base}/assets/{name}") for name in names]
    assert [answer.status_code for answer in answers] == [404] * len(names)
    assert all("error" in answer.json() for answer in answers)


def test_the_committed_build_names_its_assets_by_content() -> None:
    page = (DIST / "index.html").read_text()
    referenced = set(re.findall(r"assets/([^\"]+)", page))
    built = {path.name for path in (DIST / "assets").iterdir()}
    assert referenced == built
    assert all(re.fullmatch(r"app-[A-Z0-9]{8}\.(js|css)", name) for name in built)


async def test_a_browser_signs_in_with_the_token_as_a_subprotocol(serve_fake: Serve) -> None:
    async with serve_fake(token="s3cret-é") as base:
        async with connect(ws_url(base), subprotocols=["acp", bearer("s3cret-é")]) as socket:
            await socket.send(json.dumps(INITIALIZE))
            init = json.loads(await socket.recv())
            chosen = socket.subprotocol
        with pytest.raises(websockets.InvalidStatus) as wrong:
            await connect(ws_url(base), subprotocols=["acp", bearer("nope")])
        with pytest.raises(websockets.InvalidStatus) as missing:
            await connect(ws_url(base), subprotocols=["acp"])
        async with connect(ws_url(base), additional_headers={"Authorization": "Bearer s3cret-é"}):
            pass  # editors keep signing in with the header
    assert chosen == "acp"  # never the entry carrying the token
    assert init["result"]["protocolVersion"] == 1
    assert wrong.value.response.status_code == missing.value.response.status_code == 401


async def test_without_a_token_the_server_selects_acp_or_nothing(serve_fake: Serve) -> None:
    async with serve_fake() as base:
        async with connect(ws_url(base), subprotocols=["acp"]) as socket:
            chosen = socket.subprotocol
        async with connect(ws_url(base)) as plain:
            none = plain.subprotocol
    assert (chosen, none) == ("acp", None)


@pytest.mark.parametrize(
    ("offered", "token"),
    [
        ("iac-code.bearer.czNjcmV0", b"s3cret"),
        ("iac-code.bearer.", b""),
        ("iac-code.bearer.!!", None),
        ("iac-code.bearer.czNjcmV0=", None),  # padding is not sent
        ("iac-code.bearer.czNjc", None),  # no encoding is 4n + 1 long
        ("acp", None),
        ("bearer.czNjcmV0", None),
    ],
)
def test_the_token_subprotocol_decodes_only_its_own_shape(
    offered: str, token: bytes | None
) -> None:
    assert subprotocol_token(offered) == token


async def test_an_unbuilt_client_is_a_404_that_says_how_to_build_it(tmp_path: Path) -> None:
    app = FastAPI()
    app.include_router(web_page_router(tmp_path / "dist"))
    async with running(app) as base, httpx.AsyncClient() as http:
        page = await http.get(f"{base}/")
    assert page.status_code == 404
    assert "npm ci && npm run build" in page.json()["error"]
