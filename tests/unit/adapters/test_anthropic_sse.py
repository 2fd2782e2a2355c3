"""Server-sent events read from bytes however the network splits them."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from adapters.llm.anthropic_stream import SseDecoder, SseEvent

RAW = (
    b'event: message_start\ndata: {"type":"message_start"}\n\n'
    b": a comment\r\nevent: ping\r\ndata: {}\r\n\r\n"
    b"data: first line\ndata: second line\n\n"
    b'event: content_block_delta\ndata: {"text":"\xc3\xa9"}\n\n'
)
EXPECTED = [
    SseEvent("message_start", b'{"type":"message_start"}'),
    SseEvent("ping", b"{}"),
    SseEvent(None, b"first line\nsecond line"),
    SseEvent("content_block_delta", '{"text":"é"}'.encode()),
]


def decode(pieces: list[bytes]) -> list[SseEvent]:
    decoder = SseDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    return events + decoder.end()


def test_events_in_one_read():
    assert decode([RAW]) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(RAW)), max_size=12))
def test_events_split_anywhere_read_the_same(cuts):
    bounds = [0, *sorted(cuts), len(RAW)]
    pieces = [RAW[a:b] for a, b in itertools.pairwise(bounds)]

    assert decode(pieces) == EXPECTED


def test_a_last_event_without_its_blank_line_still_counts():
    assert decode([b"data: {}"]) == [SseEvent(None, b"{}")]
