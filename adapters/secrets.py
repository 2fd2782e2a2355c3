"""Which environment variables are the agent's own credentials."""

# A command has no business reading them, and whatever a tool reads goes to the model
# provider and into history.
_SECRET_NAMES = frozenset(
    {
        "IAC_CODE_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "IACCODE_ACP_HTTP_TOKEN",
        "IAC_CODE_ACP_HTTP_TOKEN",
    }
)


def is_secret(name: str) -> bool:
    """The server's keys and tokens, and any provider's `*_API_KEY`."""
    return name in _SECRET_NAMES or name.upper().endswith("_API_KEY")
