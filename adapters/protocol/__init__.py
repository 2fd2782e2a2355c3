"""The ACP protocol core shared by every transport: JSON-RPC framing, dispatch, wire mapping.

`jsonrpc`, `connection` and `handshake` are light (standard library only) so that the
`initialize` answer never waits for the heavy modules; `agent` and `wire` load `acp.schema`.
"""
