"""The Messages API's event stream, read straight from the response bytes.

The SDK still sends the request (auth, retries before the first byte, status errors); the
body is read here because its typed stream builds and checks several models per event and
a snapshot of the whole message after each: with a fast model that cost more than
everything else the agent does per delta. Here an event is one orjson parse and a few
dictionary lookups, and the assembled message is the same.
"""

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jiter
import orjson

from application.ports.llm import ModelEvent, TextChunk, ThinkingChunk, ToolUseStarted
from domain.content import (
    AssistantBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from domain.usage import Usage

log = logging.getLogger(__name__)


class StreamFailed(Exception):
    """An `error` event in the stream, or a stream that ended before `message_stop`."""

    def __init__(self, error_type: str | None, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class SseEvent(NamedTuple):  # a tuple: one is made per delta
    event: str | None
    data: bytes  # JSON for the Messages API: parsed from the bytes, never decoded first


ChunkKind = type[TextChunk] | type[ThinkingChunk]


class SseDecoder:
    """Server-sent events from bytes fed as they arrive (the `event` and `data` fields; an
    event may span reads)."""

    def __init__(self) -> None:
        self._partial = b""
        self._event: str | None = None
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[SseEvent]:
        held_cr = self._partial.endswith(b"\r")
        self._partial += chunk
        if held_cr or b"\r" in chunk:
            self._lf_only()
        elif b"\n" not in chunk:
            return []
        *lines, self._partial = self._partial.split(b"\n")
        events: list[SseEvent] = []
        for line in lines:
            if not line:
                if self._data:
                    events.append(SseEvent(self._event, b"\n".join(self._data)))
                self._event, self._data = None, []
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                self._data.append(value)
            elif name == b"event":
                self._event = value.decode()
        return events

    def _lf_only(self) -> None:
        """CRLF and a lone CR end lines too (the API sends LF; the format, and the SDK,
        allow all three). A CR at the very end waits: it may be the first half of a CRLF."""
        text = self._partial.replace(b"\r\n", b"\n")
        held = text.endswith(b"\r")
        text = (text[:-1] if held else text).replace(b"\r", b"\n")
        self._partial = text + b"\r" if held else text

    def end(self) -> list[SseEvent]:
        """What a stream that ends without a final blank line still completed."""
        return self.feed(b"\n\n") if self._partial or self._data else []


@dataclass(slots=True)
class _Block:
    kind: str
    start: dict[str, Any]
    parts: list[str] = field(default_factory=list)
    signature: str | None = None


@dataclass(slots=True)
class MessageAssembly:
    """The message the events describe, built as they come; `take` returns what to stream."""

    stop_reason: str | None = None
    finished: bool = False
    _blocks: dict[int, _Block] = field(default_factory=dict)
    _usage: dict[str, Any] = field(default_factory=dict)

    def take(self, event: dict[str, Any]) -> ModelEvent | None:
        kind = event.get("type")
        if kind == "content_block_delta":
            shown = self.delta(event["index"], event["delta"])
            return None if shown is None else shown[0](text=shown[1])
        if kind == "content_block_start":
            block = event["content_block"]
            self._blocks[event["index"]] = _Block(block["type"], block, [], block.get("signature"))
            if block["type"] == "tool_use":  # once per block, never per delta
                return ToolUseStarted(id=block["id"], name=block["name"])
        elif kind == "message_start":
            self._usage.update(event["message"].get("usage") or {})
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason") or self.stop_reason
            usage = event.get("usage") or {}
            self._usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.finished = True
        return None

    def delta(self, index: int, delta: dict[str, Any]) -> tuple[ChunkKind, str] | None:
        """Takes a block's delta; what of it to show, and as which kind of chunk."""
        block = self._blocks.get(index)
        if block is None:
            return None
        match delta.get("type"):
            case "text_delta":
                block.parts.append(delta["text"])
                return TextChunk, delta["text"]
            case "thinking_delta":
                block.parts.append(delta["thinking"])
                return ThinkingChunk, delta["thinking"]
            case "signature_delta":
                block.signature = delta["signature"]
            case "input_json_delta":
                block.parts.append(delta["partial_json"])
        return None

    def content(self) -> tuple[AssistantBlock, ...]:
        blocks = (_finished(self._blocks[i]) for i in sorted(self._blocks))
        return tuple(b for b in blocks if b is not None)

    def usage(self) -> Usage:
        u = self._usage
        return Usage(
            input_tokens=u.get("input_tokens") or 0,
            output_tokens=u.get("output_tokens") or 0,
            cache_read_tokens=u.get("cache_read_input_tokens") or 0,
            cache_write_tokens=u.get("cache_creation_input_tokens") or 0,
        )


def _finished(block: _Block) -> AssistantBlock | None:
    start, text = block.start, "".join(block.parts)
    match block.kind:
        case "text":
            return TextBlock(text=start.get("text", "") + text)
        case "thinking":
            return ThinkingBlock(
                thinking=start.get("thinking", "") + text, signature=block.signature
            )
        case "redacted_thinking":
            return RedactedThinkingBlock(data=start["data"])
        case "tool_use":
            return ToolUseBlock(id=start["id"], name=start["name"], input=_input(block, text))
    log.info("ignoring %s block from the model", block.kind)
    return None


def _input(block: _Block, streamed: str) -> dict[str, Any]:
    if not streamed:
        return dict(block.start.get("input") or {})
    try:
        value = json.loads(streamed)
    except ValueError:
        value = _prefix(block, streamed)
    return value if isinstance(value, dict) else {}


def _prefix(block: _Block, streamed: str) -> Any:
    """What a tool input cut short (the model ran out of tokens) holds so far, read as the
    SDK reads it: the session keeps that call's arguments as far as they came."""
    try:
        return jiter.from_json(streamed.encode(), partial_mode=True)
    except ValueError:
        log.warning("tool input of %s is not JSON; using {}", block.start.get("name"))
        return {}


async def model_events(
    chunks: AsyncIterator[bytes], assembly: MessageAssembly
) -> AsyncIterator[ModelEvent]:
    """Text and thinking as they stream; the whole message stays in `assembly`. Raises
    StreamFailed for an `error` event or a stream cut short."""
    decoder = SseDecoder()
    async with aclosing(gathered(chunks)) as batches:  # its reader ends with this stream
        async for chunk in batches:
            for event in _arrived(decoder.feed(chunk), assembly):
                yield event
    for event in _arrived(decoder.end(), assembly):
        yield event
    if not assembly.finished:
        raise StreamFailed(None, "the stream ended before the message was complete")


# Bytes read ahead and not yet taken: past this the reader waits (the socket then holds
# the rest; TCP's flow control does the remaining work).
MAX_READ_AHEAD = 1 << 20


async def gathered(chunks: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    """The body as it arrives, every chunk read while the caller was busy joined into one.

    The HTTP client yields each chunk the server flushed (one per event for the Messages
    API) however many of them one network read brought. A reader task takes them as they
    come; the caller takes all that waits at once. A caller that keeps up gets each chunk
    alone, as before; one that falls behind gets fewer, larger pieces. The reader's errors
    are raised here, as iterating `chunks` would have raised them."""
    waiting: list[bytes] = []
    held = 0  # bytes in `waiting`
    ready = asyncio.Event()  # something waits, or the body ended
    room = asyncio.Event()  # the reader may read on
    room.set()
    ended: list[Exception | None] = []  # once the body ended: how (None: completely)

    async def read() -> None:
        nonlocal held
        failure: Exception | None = None
        try:
            async for chunk in chunks:
                waiting.append(chunk)
                held += len(chunk)
                ready.set()
                if held >= MAX_READ_AHEAD:
                    room.clear()
                    await room.wait()
        except Exception as exc:
            failure = exc
        finally:
            await _closed(chunks)
            ended.append(failure)
            ready.set()

    reader = asyncio.get_running_loop().create_task(read())
    try:
        while True:
            if waiting:
                batch = waiting[0] if len(waiting) == 1 else b"".join(waiting)
                waiting.clear()
                held = 0
                room.set()
                yield batch
            elif ended:
                break
            else:
                ready.clear()
                await ready.wait()
        if ended[0] is not None:
            raise ended[0]
    finally:
        if not reader.done():
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


async def _closed(chunks: AsyncIterator[bytes]) -> None:
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()


def _arrived(events: list[SseEvent], assembly: MessageAssembly) -> Iterator[ModelEvent]:
    """The events of what arrived together, each run of text (or thinking) deltas joined
    into one chunk: a model that outpaces the agent is then shown, numbered, journaled and
    sent once per batch rather than once per delta. Nothing is held for a later batch, and
    the text before an `error` event is yielded before it is raised."""
    run: list[str] = []
    kind: ChunkKind | None = None
    for sse in events:
        if sse.event == "ping" or not sse.data:
            continue
        data = _loads(sse.data)
        if sse.event == "error" or data.get("type") == "error":
            if kind is not None:  # the text before the error was shown
                yield kind(text="".join(run), deltas=len(run))
            raise _failure(sse, data)
        if data.get("type") != "content_block_delta":
            if (event := assembly.take(data)) is not None:
                if kind is not None:
                    yield kind(text="".join(run), deltas=len(run))
                    kind, run = None, []
                yield event
            continue
        # Most events are deltas: no object is made for one.
        shown = assembly.delta(data["index"], data["delta"])
        if shown is None:
            continue
        if shown[0] is kind:
            run.append(shown[1])
            continue
        if kind is not None:
            yield kind(text="".join(run), deltas=len(run))
        kind, run = shown[0], [shown[1]]
    if kind is not None:
        yield kind(text="".join(run), deltas=len(run))


def _failure(sse: SseEvent, data: Any) -> StreamFailed:
    error = data.get("error") if isinstance(data.get("error"), dict) else data
    detail = error.get("message") or sse.data.decode(errors="replace")
    return StreamFailed(error.get("type"), str(detail)[:300])


def _loads(data: bytes) -> Any:
    """An event's JSON (an envelope: its numbers are small, tool input is a string in it).
    orjson refuses a lone surrogate escape ("\\ud83d", half an emoji), which is valid JSON
    and which the model does send: the standard library reads it, as the SDK did, and later
    layers repair the text."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
