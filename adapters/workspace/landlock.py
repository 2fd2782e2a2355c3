"""The sandbox's fallback where bubblewrap cannot run (no `bwrap`, or a kernel or container
that refuses user namespaces): Landlock rules and the same seccomp program, applied by the
launcher to the command's process just before it runs the shell.

Standard library only: the launcher (`python -I -S launcher.py`) imports this module by
its path, and the server imports it to ask the kernel's Landlock version.

What it confines, and what it cannot (docs/sandbox.md): the command reads only the
system's directories, `/dev`, `/proc` and the session's directories, and writes only the
session's directories (at `workspace-write`) and a private temporary directory, which is
also its `$HOME` and `$TMPDIR`; it opens no TCP connection and binds no TCP port (network
`none`; Landlock does not cover UDP, so a name may still resolve); it cannot signal or
reach through abstract sockets any process outside its own domain (the server). Unlike
bubblewrap, it cannot cover the server's own files inside a session's directory, nor hide
other processes from `/proc`.
"""

import ctypes
import os
import struct

SYSCALL_CREATE_RULESET = 444  # the same numbers on x86-64 and arm64
SYSCALL_ADD_RULE = 445
SYSCALL_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
MIN_ABI = 4  # TCP rules: without them a command with network `none` would reach it

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
READING = EXECUTE | READ_FILE | READ_DIR
WRITING = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
)
NO_DEVICES = MAKE_CHAR | MAKE_BLOCK
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_libc = ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *arguments: object) -> int:
    result = int(_libc.syscall(number, *arguments))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def abi() -> int:
    """The kernel's Landlock version; 0 where it has none (or it is disabled)."""
    try:
        return _syscall(SYSCALL_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except OSError:
        return 0


def _handled_fs(version: int) -> int:
    handled = READING | WRITING | NO_DEVICES
    if version < 2:
        handled &= ~REFER
    if version < 3:
        handled &= ~TRUNCATE
    if version >= 5:
        handled |= IOCTL_DEV
    return handled


def _ruleset(version: int, *, network: bool) -> int:
    """A ruleset handling every file access this version knows, TCP unless the network is
    allowed, and (from version 6) signals and abstract sockets out of the domain."""
    fields = [_handled_fs(version), 0 if network else NET_BIND_TCP | NET_CONNECT_TCP]
    if version >= 6:
        fields.append(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    attributes = struct.pack(f"={len(fields)}Q", *fields)
    buffer = ctypes.create_string_buffer(attributes, len(attributes))
    return _syscall(SYSCALL_CREATE_RULESET, buffer, len(attributes), 0)


def _allow(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:  # not on this machine (lib32, say): nothing to allow there
        return
    try:
        if not os.path.isdir(path):  # a file's rule may name only what applies to files
            access &= EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
        rule = struct.pack("=Qi", access, fd)  # struct landlock_path_beneath_attr, packed
        buffer = ctypes.create_string_buffer(rule, len(rule))
        _syscall(SYSCALL_ADD_RULE, ruleset, RULE_PATH_BENEATH, buffer, 0)
    finally:
        os.close(fd)


def restrict(
    *, read: list[str], write: list[str], devices: list[str], network: bool, version: int
) -> None:
    """Confine this process and what it runs from now on (no_new_privs is set first, as
    Landlock and seccomp ask). Raises OSError when the kernel refuses."""
    handled = _handled_fs(version)
    ruleset = _ruleset(version, network=network)
    try:
        for path in read:
            _allow(ruleset, path, READING & handled)
        for path in write:
            _allow(ruleset, path, (READING | WRITING) & handled)
        for path in devices:  # /dev/null and its kin: read and written, never made
            _allow(ruleset, path, (READ_FILE | WRITE_FILE) & handled)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        _syscall(SYSCALL_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(program: bytes) -> None:
    """Install a seccomp BPF program (8 bytes an instruction) on this process."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
