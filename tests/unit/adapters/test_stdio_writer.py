"""The stdio writer keeps serving whatever one message holds."""

import contextlib
import io
import json
from typing import Any

import pytest

from adapters.stdio.transport import StdioTransport


def note(value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "note", "params": {"value": value}}


def circular() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize("unwritable", [object(), circular()], ids=["not-json", "circular"])
async def test_a_message_that_cannot_be_json_does_not_take_the_others_down(
    unwritable: Any,
) -> None:
    sink = io.BytesIO()
    transport = StdioTransport(io.BytesIO(), sink, max_line=1 << 20)
    await transport.send(note("before"))
    # Refusing it to its sender, as before the writer took dicts, is fine too.
    with contextlib.suppress(TypeError, ValueError, RecursionError):
        await transport.send(note(unwritable))
    await transport.send(note("after"))
    await transport.close()

    lines = sink.getvalue().splitlines()
    assert [json.loads(line)["params"]["value"] for line in lines] == ["before", "after"]
