"""web_fetch: a page as text, with timeouts and a size cap, and no unasked reach into the
user's own machine or network (see adapters.tools.network)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

from adapters.tools.base import Limits, Tool, ToolInputError, int_arg, schema, text_arg
from adapters.tools.network import (
    Classify,
    Resolve,
    SessionMemory,
    address_kind,
    resolve_host,
)
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from domain.text import clip
from domain.tool_call import TextOutput

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class _Page:
    status: int
    kind: str
    body: bytes
    capped: bool
    location: str | None  # where a redirect points


class WebFetch(Tool):
    """Fetches are checked before they are made, on the address the host resolves to:

    - a loopback, link-local, private or otherwise non-public address is asked about;
    - a URL with a query string (data the model could be leaking) to a host not fetched
      before in the session is asked about;
    - the connection goes to the very address that was checked (no second DNS lookup that
      a rebinding name could answer differently);
    - redirects are followed by hand, each checked the same way; one that would need asking
      is not followed: the model is told where it points and may fetch it (and be asked).
    """

    definition = ToolDefinition(
        name="web_fetch",
        description="Fetch a web page (http or https) and return its text. Fetching a "
        "private or local address, or sending a query string to a new host, asks the user.",
        input_schema=schema(
            {"url": {"type": "string"}, "max_length": {"type": "integer", "minimum": 1}}, ["url"]
        ),
    )

    def __init__(
        self, limits: Limits, resolve: Resolve = resolve_host, classify: Classify = address_kind
    ) -> None:
        self._limits = limits
        self._resolve = resolve
        self._classify = classify
        self._memory = SessionMemory()

    async def plan(self, arguments: Mapping[str, object], context: ToolContext) -> ToolPlan:
        url = _url(arguments)
        int_arg(arguments, "max_length")
        addresses = await self._addresses(url)
        reason = self._reason(url, addresses, context.session_id)
        self._memory.plan(context.session_id, url, addresses)
        # Also flagged outside_cwd: whatever refuses calls that reach beyond the working
        # directory unasked (the sub-agent does) refuses this one too.
        return ToolPlan(ask_reason=reason, outside_cwd=reason is not None)

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        url = _url(arguments)
        limit = min(
            int_arg(arguments, "max_length") or self._limits.fetch_chars,
            self._limits.fetch_chars * 4,
        )
        import httpx  # here, not at module level: keeps it off the startup path

        session = context.session_id
        addresses = self._memory.planned(session, url)
        if addresses is None:  # not planned, so nobody was asked: fetch only what needs no asking
            addresses = await self._addresses(url)
            if reason := self._reason(url, addresses, session):
                return ToolResult(text=f"{url} was not fetched: {reason}.", is_error=True)
        try:
            for _ in range(MAX_REDIRECTS + 1):
                page = await self._download(url, addresses)
                self._memory.fetched(session, _host(url))
                if page.location is None:
                    return self._result(url, page, limit)
                target = urljoin(url, page.location)
                if urlsplit(target).scheme not in ("http", "https"):
                    return _stopped(url, target, "it is not an http(s) URL")
                addresses = await self._addresses(target)
                if reason := self._reason(target, addresses, session):
                    return _stopped(url, target, reason)
                url = target
        except httpx.HTTPError as exc:
            return ToolResult(
                text=f"Fetching {url} failed: {type(exc).__name__}: {exc}", is_error=True
            )
        except ToolInputError as exc:
            return ToolResult(text=f"Following a redirect from {url} failed: {exc}", is_error=True)
        return ToolResult(text=f"{url}: more than {MAX_REDIRECTS} redirects.", is_error=True)

    async def _addresses(self, url: str) -> tuple[str, ...]:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            addresses = await self._resolve(_host(url), port)
        except OSError as exc:
            raise ToolInputError(f"Cannot resolve {_host(url)}: {exc}.") from None
        if not addresses:
            raise ToolInputError(f"Cannot resolve {_host(url)}.")
        return addresses

    def _reason(self, url: str, addresses: tuple[str, ...], session: str) -> str | None:
        """Why fetching `url` at `addresses` must be asked about, if it must."""
        host = _host(url)
        for address in addresses:
            if kind := self._classify(address):
                where = "is" if host == address else f"resolves to {address}, which is"
                return f"{host} {where} a {kind} address"
        if urlsplit(url).query and not self._memory.known(session, host):
            return f"it sends a query string to {host}, a host not fetched before in this session"
        return None

    async def _download(self, url: str, addresses: tuple[str, ...]) -> _Page:
        import httpx

        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
        headers = {"User-Agent": "iac-code", "Host": f"{parts.netloc.rpartition('@')[2]}"}
        # The certificate is still checked against the host name (SNI), not the address.
        extensions = {"sni_hostname": _host(url)} if parts.scheme == "https" else {}
        # No proxies from the environment: a proxy would resolve the name itself.
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(self._limits.fetch_timeout), trust_env=False
        ) as client:
            for n, address in enumerate(addresses):
                literal = f"[{address}]" if ":" in address else address
                direct = urlunsplit(
                    (parts.scheme, literal + port, parts.path or "/", parts.query, "")
                )
                request = client.build_request(
                    "GET", direct, headers=headers, extensions=extensions
                )
                try:
                    response = await client.send(request, stream=True)
                except httpx.ConnectError:
                    if n == len(addresses) - 1:
                        raise
                    continue
                try:
                    return await self._read(response)
                finally:
                    await response.aclose()
        raise httpx.ConnectError(f"no address of {_host(url)} to connect to")

    async def _read(self, response: "httpx.Response") -> _Page:
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        location = response.headers.get("location")
        if response.status_code in REDIRECTS and location:
            return _Page(response.status_code, kind, b"", False, location)
        data = bytearray()
        capped = False
        async for chunk in response.aiter_bytes():
            data.extend(chunk)
            if len(data) >= self._limits.fetch_bytes:
                capped = True
                break
        body = bytes(data[: self._limits.fetch_bytes])
        return _Page(response.status_code, kind, body, capped, None)

    def _result(self, url: str, page: _Page, limit: int) -> ToolResult:
        kind = page.kind
        if not kind.startswith(
            ("text/", "application/json", "application/xml", "application/xhtml")
        ):
            text = (
                f"{url} returned {kind or 'unknown content'} ({len(page.body)} bytes); not shown."
            )
        else:
            # html.parser is imported with the first page shown: ~3 ms of every start else.
            from adapters.tools.html_text import html_to_text

            decoded = page.body.decode("utf-8", errors="replace")
            text = html_to_text(decoded) if "html" in kind else decoded
            text = clip(text, limit, "; raise max_length to see more")
            if page.capped:
                text += f"\n[... download stopped at {self._limits.fetch_bytes} bytes]"
        return ToolResult(
            text=text,
            is_error=page.status >= 400,
            output=(TextOutput(text=text),),
            raw_output={"url": url, "status": page.status, "contentType": kind},
        )


def _url(arguments: Mapping[str, object]) -> str:
    url = text_arg(arguments, "url") or ""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        raise ToolInputError(f"url is malformed: {exc}.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolInputError("url must be an absolute http(s) URL.")
    return url


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _stopped(url: str, target: str, reason: str) -> ToolResult:
    text = (
        f"{url} redirects to {target}, which was not fetched: {reason}. To fetch it, call "
        "web_fetch with that URL (the user may be asked)."
    )
    return ToolResult(
        text=text,
        output=(TextOutput(text=text),),
        raw_output={"url": url, "redirect": target, "followed": False},
    )
