"""A Server-Sent Events reader over an httpx streaming response, for the HTTP transport's
tests: it keeps every field (id, event, retry, comments) so the tests can check framing."""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.patience import PATIENCE


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: str
    id: str | None

    def json(self) -> Any:
        return json.loads(self.data)


@dataclass
class SseStream:
    response: httpx.Response
    comments: list[str] = field(default_factory=list)
    retry: int | None = None
    ended: bool = False

    def __post_init__(self) -> None:
        self._lines = self.response.aiter_lines()

    async def next(self, timeout: float = PATIENCE) -> SseEvent:
        """The next event; AssertionError if the stream ends or nothing comes in time."""
        event = await asyncio.wait_for(self._read_event(), timeout)
        if event is None:
            raise AssertionError("the event stream ended")
        return event

    async def take(self, count: int, timeout: float = PATIENCE) -> list[SseEvent]:
        return [await self.next(timeout) for _ in range(count)]

    async def until(self, predicate: Any, timeout: float = PATIENCE) -> list[SseEvent]:
        """Events up to and including the first one for which predicate(event) is true."""
        events: list[SseEvent] = []
        while not events or not predicate(events[-1]):
            events.append(await self.next(timeout))
        return events

    async def rest(self, timeout: float = PATIENCE) -> list[SseEvent]:
        """Every event until the server ends the stream."""
        events: list[SseEvent] = []
        while (event := await asyncio.wait_for(self._read_event(), timeout)) is not None:
            events.append(event)
        return events

    async def _read_event(self) -> SseEvent | None:
        name, data, event_id = "message", [], None
        async for line in self._lines:
            if not line:
                if data:
                    return SseEvent(name, "\n".join(data), event_id)
                name, event_id = "message", None
                continue
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
                continue
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "data":
                data.append(value)
            elif key == "event":
                name = value
            elif key == "id":
                event_id = value
            elif key == "retry":
                self.retry = int(value)
        self.ended = True
        return None


@asynccontextmanager
async def open_sse(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> AsyncIterator[SseStream]:
    async with client.stream("GET", url, headers=headers) as response:
        yield SseStream(response)
