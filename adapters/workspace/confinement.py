"""This server's sandbox: whether it can confine a command here, and what the launcher is
handed to do so (bubblewrap's command line, the seccomp program, the limits).

Whether it can is found once, by running a trivial confined command (`probe`): a missing
`bwrap`, user namespaces the kernel refuses, or no libseccomp all say so in plain words, and
a command that asked for a sandbox then does not run at all (it never runs unconfined in
its place)."""

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.workspace.bwrap import Layout, bwrap_arguments, owner_only
from adapters.workspace.seccomp import SeccompUnavailable, refusing_filter
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxPolicy

PROBE_SECONDS = 10.0


class SandboxUnavailable(RuntimeError):
    """This machine cannot confine a command; the message says why, for a person."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    max_file_bytes: int = 4 * 2**30  # one file a command writes (RLIMIT_FSIZE)
    max_processes: int = 2048  # processes of the server's user, for a non-root server


class Confinement:
    """What every confined command of this server shares."""

    def __init__(
        self, *, bwrap: str | None, hidden: Sequence[Path] = (), limits: Limits | None = None
    ) -> None:
        self._bwrap = bwrap
        self._hidden = tuple(str(p.expanduser().resolve()) for p in hidden)
        self._limits = limits or Limits()

    @classmethod
    def found(cls, *, hidden: Sequence[Path] = (), limits: Limits | None = None) -> "Confinement":
        """With the `bwrap` on PATH (or none)."""
        return cls(bwrap=shutil.which("bwrap"), hidden=hidden, limits=limits)

    @functools.cached_property
    def _layout(self) -> Layout:
        if self._bwrap is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed: install Debian's `bubblewrap` package"
            )
        files, directories = owner_only("/etc") if os.geteuid() == 0 else ((), ())
        return Layout(
            bwrap=self._bwrap,
            home=os.path.expanduser("~"),
            hidden=self._hidden,
            secret_files=files,
            secret_directories=directories,
        )

    @functools.cached_property
    def problem(self) -> str | None:
        """Why this machine cannot confine a command; None: it can (checked once)."""
        try:
            argv = self.launch_argument(_PROBE, (), "/")
            spec = json.loads(argv)
            result = _try(spec)
        except (SandboxUnavailable, SeccompUnavailable) as exc:
            return str(exc)
        return result

    def launch_argument(self, policy: SandboxPolicy, directories: Sequence[str], cwd: str) -> str:
        """The launcher's second argument: how to confine this command."""
        spec = {
            "wrap": bwrap_arguments(self._layout, policy, directories, cwd),
            "seccomp": refusing_filter().hex(),
            "limits": {
                "RLIMIT_FSIZE": self._limits.max_file_bytes,
                "RLIMIT_NPROC": self._limits.max_processes,
                "RLIMIT_CORE": 0,
            },
        }
        return json.dumps(spec)


_PROBE = SandboxPolicy(level=SandboxLevel.READ_ONLY, network=NetworkLevel.NONE)


def _try(spec: dict[str, object]) -> str | None:
    """Run `true` confined as a command would be; what went wrong, in bwrap's words."""
    wrap = spec["wrap"]
    assert isinstance(wrap, list)
    reader, writer = os.pipe()
    try:
        os.write(writer, bytes.fromhex(str(spec["seccomp"])))
        os.close(writer)
        writer = -1
        done = subprocess.run(
            [*wrap, "--seccomp", str(reader), "--", "/bin/true"],
            pass_fds=(reader,),
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not run: {exc}"
    finally:
        os.close(reader)
        if writer >= 0:
            os.close(writer)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return f"bubblewrap could not make a sandbox here: {said}"
    return None
