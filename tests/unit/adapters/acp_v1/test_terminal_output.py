"""A terminal in a tool call: shown live as ACP terminal content, replayed as its text;
the client's capabilities recorded at `initialize`, on either path."""

from typing import Any

from acp import schema as acp

from adapters.acp_v1.handshake import handle_initialize
from adapters.acp_v1.wire import dump, tool_output_to_acp
from adapters.persistence.mappers import output_from_json, output_to_json
from adapters.protocol.connection import Connection, Dispatcher
from application.handshake.initialize import Initialize
from domain.tool_call import TerminalOutput, TextOutput


def test_a_terminal_is_shown_as_acp_terminal_content() -> None:
    content = tool_output_to_acp(TerminalOutput(terminal_id="t1", text="hi\n\nExit code 0."))
    assert isinstance(content, acp.TerminalToolCallContent)
    assert dump(content) == {"type": "terminal", "terminalId": "t1"}


def test_a_stored_terminal_comes_back_as_its_text() -> None:
    stored = output_to_json(TerminalOutput(terminal_id="t1", text="hi"))
    assert stored == {"type": "terminal", "terminal_id": "t1", "text": "hi"}
    assert output_from_json(stored) == TextOutput(text="hi")


class _Nothing(Dispatcher):
    async def handle_request(self, method: str, params: Any, peer: Connection) -> Any: ...

    async def handle_notification(self, method: str, params: Any, peer: Connection) -> None: ...

    async def peer_closed(self, peer: Connection) -> None: ...


async def _send(message: dict[str, Any]) -> None:
    pass


def test_initialize_keeps_the_clients_capabilities_on_its_connection() -> None:
    initialize = Initialize(name="iac-code", title="iac-code", version="0", takes_key=True)
    peer = Connection(_send, _Nothing())
    caps = {"fs": {"readTextFile": True}, "terminal": True}
    handle_initialize(initialize, {"protocolVersion": 1, "clientCapabilities": caps}, peer)
    assert peer.client_capabilities == caps
    handle_initialize(initialize, {"protocolVersion": 1, "clientCapabilities": "junk"}, peer)
    assert peer.client_capabilities is None
