"""A raw WebSocket client for tests, on websockets' sans-I/O protocol: the test decides
whether pings are answered and when the socket is read at all."""

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from tests.support.patience import PATIENCE

READ_SIZE = 65536


@dataclass
class RawSocket:
    protocol: ClientProtocol
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    answer_pings: bool = True
    frames: list[Frame] = field(default_factory=list)

    def send_text(self, text: str) -> None:
        self.protocol.send_text(text.encode())
        self._flush()

    def send_json(self, message: dict[str, Any]) -> None:
        self.send_text(json.dumps(message))

    def send_binary(self, data: bytes) -> None:
        self.protocol.send_binary(data)
        self._flush()

    async def next_frame(self, timeout: float = PATIENCE) -> Frame:
        """The next data, ping or close frame (pongs are left out)."""
        async with asyncio.timeout(timeout):
            while True:
                while self.frames:
                    frame = self.frames.pop(0)
                    if frame.opcode is not Opcode.PONG:
                        return frame
                data = await self.reader.read(READ_SIZE)
                if not data:
                    raise ConnectionError("the server closed the TCP connection")
                self.protocol.receive_data(data)
                for event in self.protocol.events_received():
                    assert isinstance(event, Frame)
                    self.frames.append(event)
                if self.answer_pings:
                    self._flush()  # pongs (the protocol queues them) and close replies

    async def next_message(self, timeout: float = PATIENCE) -> dict[str, Any]:
        """The next JSON-RPC message (pings on the way are answered or not, as set)."""
        while True:
            frame = await self.next_frame(timeout)
            if frame.opcode is Opcode.TEXT:
                message: dict[str, Any] = json.loads(frame.data)
                return message
            if frame.opcode is Opcode.CLOSE:
                raise AssertionError(f"closed: {Close.parse(frame.data)}")

    async def closed_with(self, timeout: float = PATIENCE) -> Close:
        """Read up to the server's close frame (skipping everything before it)."""
        while True:
            frame = await self.next_frame(timeout)
            if frame.opcode is Opcode.CLOSE:
                return Close.parse(frame.data)

    def close(self) -> None:
        self.writer.close()

    def _flush(self) -> None:
        data = b"".join(self.protocol.data_to_send())
        if data:
            self.writer.write(data)


async def open_raw(
    url: str, headers: dict[str, str] | None = None, timeout: float = 10.0
) -> tuple[Response, RawSocket | None]:
    """Handshake with `url` (ws://host:port/path); the response, and the socket if the
    server accepted (status 101)."""
    uri = parse_uri(url)
    protocol = ClientProtocol(uri, max_size=None)
    request = protocol.connect()
    for name, value in (headers or {}).items():
        request.headers[name] = value
    protocol.send_request(request)
    reader, writer = await asyncio.open_connection(uri.host, uri.port)
    writer.write(b"".join(protocol.data_to_send()))
    socket = RawSocket(protocol, reader, writer)
    async with asyncio.timeout(timeout):
        while True:
            data = await reader.read(READ_SIZE)
            protocol.receive_data(data)
            events = protocol.events_received()
            if events or not data:
                break
    response = events[0] if events else protocol.handshake_exc
    assert isinstance(response, Response), f"no handshake response: {response!r}"
    if response.status_code != 101:
        writer.close()
        return response, None
    socket.frames.extend(e for e in events[1:] if isinstance(e, Frame))
    return response, socket
