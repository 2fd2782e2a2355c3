"""A command run in a real pseudo-terminal, as a person (or an editor's terminal) runs it:
the kernel's line discipline echoes what is typed unless the program turns echo off, so
what `screen` holds is what a user would see. Blocking: call from a thread in async tests."""

import os
import pty
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.support.patience import PATIENCE


class Terminal:
    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        # A new session without a controlling terminal: getpass then turns echo off on
        # stdin, which is this terminal.
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
        os.close(slave)
        self._master = master
        self.screen = ""

    def expect(self, text: str) -> None:
        """Read until `text` is on the screen; fail (showing it) if it never comes."""
        deadline = time.monotonic() + PATIENCE
        while text not in self.screen:
            left = deadline - time.monotonic()
            assert left > 0 and self._read(left), f"never saw {text!r} on:\n{self.screen}"

    def type(self, line: str) -> None:
        """Type `line` and Enter (a carriage return, which the terminal makes a newline)."""
        os.write(self._master, line.encode() + b"\r")

    def exit_code(self) -> int:
        """Read the screen to its end, then the command's exit status."""
        deadline = time.monotonic() + PATIENCE
        while self._read(max(0.0, deadline - time.monotonic())):
            pass
        code = self.process.wait(timeout=PATIENCE)
        os.close(self._master)
        return code

    def _read(self, timeout: float) -> bool:
        """False at the end of the output (Linux answers EIO once the command closed it)."""
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self._master, 4096)
        except OSError:
            return False
        self.screen += data.decode(errors="replace")
        return bool(data)
