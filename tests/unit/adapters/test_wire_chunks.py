"""Streamed text goes out as a prepared dict: it must be exactly what the SDK's model gives."""

from acp import schema as acp
from hypothesis import given
from hypothesis import strategies as st

from adapters.protocol.jsonrpc import encode
from adapters.protocol.wire import dump, notification_for, update_for
from domain.events import Notice, TextDelta, ThinkingDelta
from domain.ids import MessageId

texts = st.text(max_size=40)
ids = st.text(min_size=1, max_size=12).map(MessageId)
chunk_events = st.one_of(
    st.builds(TextDelta, message_id=ids, text=texts),
    st.builds(ThinkingDelta, message_id=ids, text=texts),
    st.builds(Notice, message_id=ids, text=texts),
)


@given(event=chunk_events, session_id=st.text(min_size=1, max_size=12))
def test_a_prepared_chunk_is_what_the_sdk_model_dumps(event, session_id):
    modelled = dump(acp.SessionNotification(session_id=session_id, update=update_for(event)))

    prepared = notification_for(session_id, event)

    assert prepared == modelled
    acp.SessionNotification.model_validate(prepared)


def test_a_prepared_chunk_encodes_to_one_line():
    event = TextDelta(message_id=MessageId("m1"), text='line\none "quoted" é')

    line = encode(
        {"jsonrpc": "2.0", "method": "session/update", "params": notification_for("s", event)}
    )

    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
