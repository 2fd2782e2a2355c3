"""Fuzzing the WebSocket transport frame by frame: text frames of any bytes (not UTF-8,
garbage JSON), binary frames, frames over the size limit, fragmented messages (finished or
not, control frames between fragments, continuations out of place), control frames (pings,
pongs, closes with any code and reason, some over 125 bytes), reserved opcodes and bits,
unmasked frames. The frames are written raw, past any client library's checks, to one
server (the transport over the fake agent, in a thread) started once for the test.

After each case: the socket answers a probe or is closed with a documented code, a new
connection is served, and nothing was logged at ERROR or with a traceback."""

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest
import uvicorn
from hypothesis import given
from hypothesis import strategies as st

from adapters.http.app import create_app
from tests.http.conftest import FAST, INITIALIZE, FakeAgent, always_ready
from tests.support.ws_client import RawSocket, open_raw

pytestmark = [pytest.mark.fuzz, pytest.mark.integration]

MAX_MESSAGE = 2048  # IAC_CODE_HTTP_MAX_BODY_BYTES: a larger frame closes with 1009
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
# docs/http.md's close codes (1002: websockets' own, for frames that break the protocol)
CLOSE_CODES = {1000, 1002, 1003, 1007, 1008, 1009}
PROBE = {"jsonrpc": "2.0", "id": "probe", "method": "echo", "params": {"p": 1}}


@dataclass(frozen=True)
class Raw:
    """One frame as written on the wire (a client's: masked, unless `masked` is False)."""

    opcode: int
    payload: bytes = b""
    fin: bool = True
    rsv: int = 0
    masked: bool = True

    def encode(self) -> bytes:
        first = (0x80 if self.fin else 0) | (self.rsv << 4) | self.opcode
        size = len(self.payload)
        bit = 0x80 if self.masked else 0
        if size < 126:
            head = bytes([first, bit | size])
        elif size < 2**16:
            head = bytes([first, bit | 126]) + size.to_bytes(2, "big")
        else:
            head = bytes([first, bit | 127]) + size.to_bytes(8, "big")
        if not self.masked:
            return head + self.payload
        key = b"\x9a\x01\x5c\xe3"
        return head + key + bytes(b ^ key[n % 4] for n, b in enumerate(self.payload))


class Trouble(logging.Handler):
    """Every record at ERROR or above, or carrying a traceback, from any thread."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info or record.stack_info:
            self.records.append(record)


@dataclass
class Served:
    base: str
    trouble: Trouble


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """The app over the fake agent on uvicorn, in a thread with its own event loop."""
    config = replace(FAST, max_body_bytes=MAX_MESSAGE, max_connections=1_000)
    app = create_app(FakeAgent(), config, always_ready)
    from adapters.http.slow_clients import uvicorn_options
    from adapters.http.websocket_protocol import websocket_options

    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_config=None,
            access_log=False,
            **(uvicorn_options(config.header_timeout_seconds) | websocket_options(config)),
        )
    )
    trouble = Trouble()
    logging.getLogger().addHandler(trouble)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(f"ws://127.0.0.1:{port}/acp", trouble)
    finally:
        server.should_exit = True
        thread.join(30)
        logging.getLogger().removeHandler(trouble)


# ---- what is sent ------------------------------------------------------------------------

garbage_json = st.sampled_from(
    [b"", b"{", b"[]", b"null", b"1e999999", b'{"jsonrpc":"2.0"}', b'{"id":{}}', b"NaN", b"\x00"]
)
# a stray byte, a bad continuation, overlong, a surrogate, past U+10FFFF, cut short
BAD_UTF8 = [b"\xff", b"\xc3\x28", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"]
not_utf8 = st.builds(
    lambda before, bad, after: before.encode() + bad + after.encode(),
    st.text(max_size=20),
    st.sampled_from(BAD_UTF8),
    st.text(max_size=20),
)
text_bytes = (
    not_utf8
    | st.binary(max_size=64)
    | st.text(max_size=64).map(str.encode)
    | garbage_json
    | st.builds(
        lambda m, i: json.dumps({"jsonrpc": "2.0", "id": i, "method": m}).encode(),
        st.sampled_from(["echo", "initialize", "nope", ""]),
        st.integers(-5, 5) | st.text(max_size=5),
    )
)
data_frames = st.builds(Raw, st.just(TEXT), text_bytes) | st.builds(
    Raw, st.just(BINARY), st.binary(max_size=64)
)
close_frames = st.builds(
    lambda code, reason: Raw(CLOSE, code.to_bytes(2, "big") + reason),
    st.integers(0, 5000),
    st.binary(max_size=20) | st.text(max_size=20).map(str.encode),
) | st.just(Raw(CLOSE))
control_frames = (
    st.builds(Raw, st.sampled_from([PING, PONG]), st.binary(max_size=130))  # > 125: invalid
    | close_frames
)
odd_frames = (
    st.builds(Raw, st.sampled_from([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), st.binary(max_size=8))
    | st.builds(Raw, st.just(TEXT), st.just(b'{"a":1}'), rsv=st.integers(1, 7))
    | st.builds(Raw, st.just(TEXT), st.just(b'{"a":1}'), masked=st.just(False))
    | st.builds(Raw, st.just(CONT), st.binary(max_size=8), fin=st.booleans())  # out of place
    | st.builds(Raw, st.just(PING), st.just(b"x"), fin=st.just(False))  # fragmented control
    | st.integers(MAX_MESSAGE + 1, MAX_MESSAGE + 300).map(lambda n: Raw(TEXT, b" " * n))
)


@st.composite
def fragmented(draw: st.DrawFn) -> list[Raw]:
    """A message in pieces, with control frames between them, finished or not."""
    opcode = draw(st.sampled_from([TEXT, BINARY]))
    pieces = draw(st.lists(text_bytes, min_size=2, max_size=4))
    frames = [Raw(opcode, pieces[0], fin=False)]
    for piece in pieces[1:]:
        if draw(st.booleans()):
            frames.append(draw(st.builds(Raw, st.just(PING), st.binary(max_size=8))))
        frames.append(Raw(CONT, piece, fin=False))
    if draw(st.integers(0, 3)):  # usually finished
        frames[-1] = replace(frames[-1], fin=True)
    return frames


cases = st.lists(
    data_frames.map(lambda f: [f])
    | control_frames.map(lambda f: [f])
    | odd_frames.map(lambda f: [f])
    | fragmented(),
    min_size=1,
    max_size=4,
).map(lambda groups: [frame for group in groups for frame in group])


# ---- what must come back -----------------------------------------------------------------


async def probe_or_close(socket: RawSocket) -> int | None:
    """Send the probe; the close code the socket ends with, or None once it answered."""
    try:
        socket.writer.write(Raw(TEXT, json.dumps(PROBE).encode()).encode())
        while True:
            frame = await socket.next_frame(timeout=20)
            if frame.opcode == CLOSE:
                return int.from_bytes(frame.data[:2], "big") if frame.data else 1005
            if frame.opcode == TEXT and json.loads(frame.data).get("id") == "probe":
                return None
    except ConnectionError:  # the server cut the TCP connection after its close frame
        return 1006


async def fuzz_once(base: str, initialize: bool, frames: list[Raw]) -> int | None:
    response, socket = await open_raw(base)
    assert socket is not None, response.status_code
    try:
        if initialize:
            socket.send_json(INITIALIZE)
            assert "result" in await socket.next_message()
        for frame in frames:
            socket.writer.write(frame.encode())
        return await probe_or_close(socket)
    finally:
        socket.close()


async def still_served(base: str) -> dict[str, object]:
    response, socket = await open_raw(base)
    assert socket is not None, response.status_code
    try:
        socket.send_json(INITIALIZE)
        await socket.next_message()
        socket.send_json(PROBE)
        return await socket.next_message()
    finally:
        socket.close()


@given(initialize=st.booleans(), frames=cases)
def test_fuzzed_websocket_frames_never_break_the_server(
    served: Served, initialize: bool, frames: list[Raw]
) -> None:
    served.trouble.records.clear()  # this case's own (a failure shrinks to its cause)
    ended = asyncio.run(fuzz_once(served.base, initialize, frames))
    # 1005: the echo of a close without a code; 1006: cut without a close frame read
    assert ended is None or ended in CLOSE_CODES | {1005, 1006}, ended
    assert asyncio.run(still_served(served.base)) == {
        "jsonrpc": "2.0",
        "id": "probe",
        "result": {"p": 1},
    }
    assert not served.trouble.records, [r.getMessage() for r in served.trouble.records]
