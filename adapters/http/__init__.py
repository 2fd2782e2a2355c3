"""The HTTP + Server-Sent Events transport: POST/GET/DELETE `/acp`.

It only frames JSON-RPC: every message goes to a `Connection` of the protocol core, and
everything that core sends comes back numbered on the connection's SSE stream.
"""
