"""A session's MCP servers: connected, reported and offered (session_servers.py), and
their own elicitation requests forwarded to the session's clients (elicitations.py)."""
