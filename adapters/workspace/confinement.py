"""This server's sandbox: what can confine a command here, and what the launcher is handed
to do so (bubblewrap's command line or the Landlock rules, the seccomp program, the limits).

bubblewrap is tried once, by running a trivial confined command; where it cannot run (no
`bwrap`, user namespaces the kernel or the container refuses), Landlock takes its place if
the kernel has it. Where neither can, a command that asked for a sandbox does not run at
all (it never runs unconfined in its place), and `problem` says why in plain words."""

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from adapters.workspace import landlock
from adapters.workspace.bwrap import (
    SYSTEM_DIRECTORIES,
    Egress,
    Layout,
    bwrap_arguments,
    egress_shell,
    owner_only,
)
from adapters.workspace.seccomp import SeccompUnavailable, refusing_filter
from adapters.workspace.worktrees import linked_repository
from domain.sandbox import NetworkLevel, SandboxLevel, SandboxPolicy

PROBE_SECONDS = 10.0


class SandboxUnavailable(RuntimeError):
    """This machine cannot confine a command; the message says why, for a person."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    max_file_bytes: int = 4 * 2**30  # one file a command writes (RLIMIT_FSIZE)
    max_processes: int = 2048  # processes of the server's user, for a non-root server


class Engine(StrEnum):
    """What confines a command: bubblewrap (namespaces, the full sandbox) or, where it
    cannot run, Landlock (adapters.workspace.landlock: weaker, said in docs/sandbox.md)."""

    BUBBLEWRAP = "bubblewrap"
    LANDLOCK = "landlock"


ENGINE_CHOICES = ("auto", Engine.BUBBLEWRAP, Engine.LANDLOCK)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


class Confinement:
    """What every confined command of this server shares. `engine`: "auto" (bubblewrap,
    else Landlock), or only the one named."""

    def __init__(
        self,
        *,
        bwrap: str | None,
        hidden: Sequence[Path] = (),
        limits: Limits | None = None,
        engine: str = "auto",
    ) -> None:
        self._bwrap = bwrap
        self._hidden = tuple(str(p.expanduser().resolve()) for p in hidden)
        self._limits = limits or Limits()
        self._engine = engine

    @classmethod
    def found(
        cls, *, hidden: Sequence[Path] = (), limits: Limits | None = None, engine: str = "auto"
    ) -> "Confinement":
        """With the `bwrap` on PATH (or none)."""
        return cls(bwrap=shutil.which("bwrap"), hidden=hidden, limits=limits, engine=engine)

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
    def _bwrap_problem(self) -> str | None:
        """Why bubblewrap cannot confine a command here; None: it can (checked once, by
        running `true` confined as a command would be)."""
        try:
            return _try(self._spec(Engine.BUBBLEWRAP, _PROBE, (), "/"))
        except (SandboxUnavailable, SeccompUnavailable) as exc:
            return str(exc)

    @functools.cached_property
    def _landlock_version(self) -> int:
        return landlock.abi()

    @functools.cached_property
    def engine(self) -> Engine | None:
        """What confines this server's commands; None: nothing can."""
        if self._engine != Engine.LANDLOCK and self._bwrap_problem is None:
            return Engine.BUBBLEWRAP
        if self._engine != Engine.BUBBLEWRAP and self._landlock_version >= landlock.MIN_ABI:
            try:
                refusing_filter()
            except SeccompUnavailable:
                return None
            return Engine.LANDLOCK
        return None

    @functools.cached_property
    def problem(self) -> str | None:
        """Why this machine cannot confine a command; None: it can."""
        if self.engine is not None:
            return None
        reasons = []
        if self._engine != Engine.LANDLOCK:
            reasons.append(self._bwrap_problem or "bubblewrap is not to be used")
        if self._engine != Engine.BUBBLEWRAP:
            version = self._landlock_version
            reasons.append(
                f"the kernel's Landlock is version {version}, {landlock.MIN_ABI} is needed"
                if version
                else "the kernel has no Landlock"
            )
        return "; ".join(reasons)

    def launch_argument(
        self,
        policy: SandboxPolicy,
        directories: Sequence[str],
        cwd: str,
        egress_socket: str | None = None,
    ) -> str:
        """The launcher's second argument: how to confine this command. An `allowlist`
        network needs bubblewrap and the egress proxy's socket (else SandboxUnavailable)."""
        engine = self.engine
        if engine is None:
            raise SandboxUnavailable(self.problem or "no sandbox")
        if policy.network is NetworkLevel.ALLOWLIST and (
            engine is not Engine.BUBBLEWRAP or egress_socket is None
        ):
            raise SandboxUnavailable(
                "the allowlist network needs bubblewrap (Landlock cannot tell one host from "
                "another)"
            )
        return json.dumps(self._spec(engine, policy, directories, cwd, egress_socket))

    def _spec(
        self,
        engine: Engine,
        policy: SandboxPolicy,
        directories: Sequence[str],
        cwd: str,
        egress_socket: str | None = None,
    ) -> dict[str, object]:
        spec: dict[str, object] = {
            "seccomp": refusing_filter().hex(),
            "limits": {
                "RLIMIT_FSIZE": self._limits.max_file_bytes,
                "RLIMIT_NPROC": self._limits.max_processes,
                "RLIMIT_CORE": 0,
            },
        }
        if engine is Engine.BUBBLEWRAP:
            egress = _egress(egress_socket) if egress_socket is not None else None
            spec["wrap"] = bwrap_arguments(self._layout, policy, directories, cwd, egress)
            if egress is not None:
                spec["shell"] = egress_shell(egress)
        else:
            spec["landlock"] = self._landlock_rules(policy, directories)
        return spec

    def _landlock_rules(
        self, policy: SandboxPolicy, directories: Sequence[str]
    ) -> dict[str, object]:
        real = [os.path.realpath(d) for d in directories]
        system = sorted({os.path.realpath(f"/{name}") for name in SYSTEM_DIRECTORIES})
        read, write = _repository_rules(real)
        if not policy.writes_workspace:
            read, write = [*read, *write, *real], []
        else:
            write = [*real, *write]
        return {
            "read": [*system, "/dev", "/proc", *read],
            "write": write,
            "devices": list(DEVICES),
            "network": policy.network is NetworkLevel.FULL,
            "version": self._landlock_version,
        }


def _egress(socket: str) -> Egress:
    python = os.path.realpath(sys.executable)
    home = os.path.realpath(sys.base_prefix)
    if not python.startswith(home.rstrip("/") + "/"):  # an interpreter outside its prefix
        home = os.path.dirname(os.path.dirname(python))
    forwarder = str(Path(__file__).with_name("forwarder.py"))
    return Egress(socket=socket, forwarder=forwarder, python=python, python_home=home)


def _repository_rules(directories: Sequence[str]) -> tuple[list[str], list[str]]:
    """(read, write) for the git directory of a worktree a session works in: Landlock only
    allows, so what a commit writes is listed (objects, refs, logs, the worktree's own
    directory), and the rest — hooks, config — only read."""
    read: list[str] = []
    write: list[str] = []
    for directory in directories:
        found = linked_repository(directory)
        if found is None:
            continue
        common, own = found
        read.append(common)
        write += [os.path.join(common, n) for n in ("objects", "refs", "logs", "packed-refs")]
        write.append(own)
    return read, write


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
