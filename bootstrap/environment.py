"""Secrets out of the process's environment block, where a tool could read them.

A child can read its parent's *initial* environment from `/proc/<ppid>/environ` (every
process running as the same user can), and deleting a variable from `os.environ` does not
change that block. So when the server starts with secrets in its environment, it re-executes
itself at once with them removed, and hands them to the new image over an inherited pipe.
They then live only in this module's memory: `environment()` is what settings read, and no
child process ever inherits them.
"""

import json
import os
import sys
from collections.abc import Mapping

from adapters.secrets import is_secret

HANDOVER_VARIABLE = "IAC_CODE_SECRETS_FD"
_PIPE_CAPACITY = 60_000  # below the smallest pipe buffer: the write can never block

_handed_over: dict[str, str] = {}


def environment() -> Mapping[str, str]:
    """The environment as the server was started with, secrets included."""
    return {**os.environ, **_handed_over}


def shed_secrets() -> None:
    """Re-execute without secrets in the environment block (never returns then), or, in
    the re-executed process, take the secrets back from the pipe."""
    handover = os.environ.pop(HANDOVER_VARIABLE, None)
    if handover is not None:
        _handed_over.update(_receive(handover))
        return
    secrets = {k: v for k, v in os.environ.items() if is_secret(k) and v}
    payload = json.dumps(secrets).encode()
    if not secrets or len(payload) > _PIPE_CAPACITY:
        return
    read_end, write_end = os.pipe()
    os.write(write_end, payload)
    os.close(write_end)
    os.set_inheritable(read_end, True)
    clean = {k: v for k, v in os.environ.items() if k not in secrets}
    clean[HANDOVER_VARIABLE] = str(read_end)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, clean)


def _receive(handover: str) -> dict[str, str]:
    chunks = []
    try:
        fd = int(handover)
        try:
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = json.loads(b"".join(chunks) or b"{}")
    except (OSError, ValueError):  # not our pipe (a stray variable): nothing handed over
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
