"""The MCP servers editors hand us, reached with the official `mcp` SDK (client side)."""
