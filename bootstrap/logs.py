import logging
import os
import sys
from typing import BinaryIO


def configure_logging(level: str) -> None:
    """Logs go to stderr only: stdout belongs to the protocol."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    for noisy in ("httpx", "httpcore", "anthropic", "aiosqlite", "alembic"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))


def claim_stdout() -> BinaryIO:
    """Take stdout for the protocol and point fd 1 (and sys.stdout) at stderr, so a stray
    print anywhere in the process can never corrupt the JSON-RPC stream."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol
