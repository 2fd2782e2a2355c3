"""The server's own memory out of its tools' reach.

The model keys live in this process's heap (bootstrap.environment), and every tool's
process runs as the same user: any of them could read `/proc/<server>/mem`, or look at the
server's open files under `/proc/<server>/fd`, as long as the server is dumpable. A
non-dumpable process allows that only to a holder of CAP_SYS_PTRACE, which the tools'
launcher drops (adapters/workspace/launcher.py) for when the server runs as root.
"""

import sys

PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """Whether it worked. Called in the final server process: an exec makes a process
    dumpable again, and the CLI re-executes itself at start (bootstrap.environment)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: the CLI imports this module before it re-executes
    import logging

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        logging.getLogger(__name__).warning(
            "could not make the server non-dumpable (errno %d)", ctypes.get_errno()
        )
        return False
    return True
