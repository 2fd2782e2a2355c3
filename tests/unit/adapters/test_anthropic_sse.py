"""Server-sent events read from bytes however the network splits them."""

import itertools

from anthropic._streaming import SSEDecoder
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


ENDINGS = st.sampled_from([b"\n", b"\r\n", b"\r"])  # all three end a line in the SSE format
FIELD_TEXT = st.text(
    st.characters(codec="utf-8", exclude_characters="\r\n"), min_size=1, max_size=8
)


@st.composite
def sse_streams(draw: st.DrawFn) -> tuple[bytes, list[tuple[str | None, bytes]]]:
    """A stream with one of the line endings, and its events."""
    raw, events, end = b"", [], draw(ENDINGS)
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            raw += b": " + draw(FIELD_TEXT).encode() + end
        name = draw(st.none() | st.sampled_from(["message_start", "ping", "error"]))
        if name is not None:
            raw += b"event: " + name.encode() + end
        data = draw(st.lists(FIELD_TEXT, min_size=1, max_size=3))
        raw += b"".join(b"data: " + d.encode() + end for d in data)
        raw += end
        events.append((name, "\n".join(data).encode()))
    return raw, events


@given(sse_streams(), st.lists(st.integers(min_value=0), max_size=8))
def test_every_line_ending_reads_as_the_sdk_reads_it(
    stream: tuple[bytes, list[tuple[str | None, bytes]]], cuts: list[int]
) -> None:
    raw, events = stream
    bounds = [0, *sorted(c % (len(raw) + 1) for c in cuts), len(raw)]
    pieces = [raw[a:b] for a, b in itertools.pairwise(bounds)]

    sdk = [(e.event, e.data.encode()) for e in SSEDecoder().iter_bytes(iter([raw]))]

    assert sdk == events
    assert [(e.event, e.data) for e in decode(pieces)] == events
