"""web_fetch: a page as text, with timeouts and a size cap."""

from collections.abc import Mapping
from html.parser import HTMLParser
from urllib.parse import urlsplit

from adapters.tools.base import Limits, Tool, ToolInputError, clip, int_arg, schema, text_arg
from application.ports.tools import Progress, ToolContext, ToolDefinition, ToolPlan, ToolResult
from domain.tool_call import TextOutput

_BLOCKS = {
    "p",
    "div",
    "br",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "table",
    "ul",
    "ol",
    "blockquote",
}
_HIDDEN = {"script", "style", "noscript", "template", "svg", "head"}


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self._hidden:
            self._hidden -= 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)

    def text(self) -> str:
        lines = (" ".join(line.split()) for line in "".join(self.parts).splitlines())
        return "\n".join(line for line in lines if line)


def html_to_text(html: str) -> str:
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.text()


class WebFetch(Tool):
    definition = ToolDefinition(
        name="web_fetch",
        description="Fetch a web page (http or https) and return its text.",
        input_schema=schema(
            {"url": {"type": "string"}, "max_length": {"type": "integer", "minimum": 1}}, ["url"]
        ),
    )

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    async def plan(self, arguments: Mapping[str, object], cwd: str) -> ToolPlan:
        url = text_arg(arguments, "url") or ""
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise ToolInputError("url must be an absolute http(s) URL.")
        int_arg(arguments, "max_length")
        return ToolPlan()

    async def run(
        self, arguments: Mapping[str, object], context: ToolContext, progress: Progress
    ) -> ToolResult:
        url = text_arg(arguments, "url") or ""
        limit = min(
            int_arg(arguments, "max_length") or self._limits.fetch_chars,
            self._limits.fetch_chars * 4,
        )
        import httpx  # here, not at module level: keeps it off the startup path

        try:
            status, kind, body, capped = await self._download(url)
        except httpx.HTTPError as exc:
            return ToolResult(
                text=f"Fetching {url} failed: {type(exc).__name__}: {exc}", is_error=True
            )
        if not kind.startswith(
            ("text/", "application/json", "application/xml", "application/xhtml")
        ):
            text = f"{url} returned {kind or 'unknown content'} ({len(body)} bytes); not shown."
        else:
            decoded = body.decode("utf-8", errors="replace")
            text = html_to_text(decoded) if "html" in kind else decoded
            text = clip(text, limit, "; raise max_length to see more")
            if capped:
                text += f"\n[... download stopped at {self._limits.fetch_bytes} bytes]"
        return ToolResult(
            text=text,
            is_error=status >= 400,
            output=(TextOutput(text=text),),
            raw_output={"url": url, "status": status, "contentType": kind},
        )

    async def _download(self, url: str) -> tuple[int, str, bytes, bool]:
        import httpx

        timeout = httpx.Timeout(self._limits.fetch_timeout)
        async with (
            httpx.AsyncClient(timeout=timeout, follow_redirects=True, max_redirects=5) as client,
            client.stream("GET", url, headers={"User-Agent": "iac-code"}) as response,
        ):
            data = bytearray()
            capped = False
            async for chunk in response.aiter_bytes():
                data.extend(chunk)
                if len(data) >= self._limits.fetch_bytes:
                    capped = True
                    break
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            return response.status_code, kind, bytes(data[: self._limits.fetch_bytes]), capped
