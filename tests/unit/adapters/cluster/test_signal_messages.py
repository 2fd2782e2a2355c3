"""A signal from another replica is read only when it is the object it should be; anything
else is logged and ignored, never raised into the listener."""

import logging

import pytest

from adapters.cluster.signal_messages import decoded_signal


def test_an_object_with_every_required_key_is_read() -> None:
    assert decoded_signal('{"op": "x", "id": 1, "more": true}', "routing", "op", "id") == {
        "op": "x",
        "id": 1,
        "more": True,
    }


@pytest.mark.parametrize("payload", ["not json", '["op", "id"]', '"op"', "null", '{"op": "x"}'])
def test_anything_else_is_logged_and_ignored(
    payload: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert decoded_signal(payload, "routing", "op", "id") is None
    assert "malformed routing signal" in caplog.text
