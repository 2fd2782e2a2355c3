"""Model events as a client sees their text: chunk boundaries aside."""

from application.ports.llm import TextChunk, ThinkingChunk


def joined(events: list[object]) -> list[object]:
    """The events with each run of chunks of one kind as one chunk, its deltas counted
    (deltas that arrive together are yielded joined, so where a run is cut depends on the
    network's timing)."""
    runs: list[object] = []
    for event in events:
        last = runs[-1] if runs else None
        if isinstance(event, TextChunk | ThinkingChunk) and type(last) is type(event):
            assert isinstance(last, TextChunk | ThinkingChunk)
            runs[-1] = type(event)(text=last.text + event.text, deltas=last.deltas + event.deltas)
        else:
            runs.append(event)
    return runs
