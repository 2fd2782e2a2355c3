"""The system calls a sandboxed command is refused, as a BPF program bubblewrap loads
(`--seccomp FD`) just before it runs the command.

Built once per server process with the machine's libseccomp (through ctypes: Debian's
`libseccomp2`, which apt itself needs, so it is there wherever apt is), which writes the
architecture checks and the syscall numbers for us: a call made through another
architecture's table (a 32-bit `int 0x80` on x86-64) kills the process. No coding task needs
any of these; each is refused with EPERM, except `clone3`, refused with ENOSYS so that the C
library falls back to `clone`, whose flags a filter can read (clone3's are behind a pointer).
"""

import contextlib
import ctypes
import errno
import functools
import os

# Debugging and reading other processes' memory.
_INTROSPECTION = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp")
# Mounts and namespaces: what a command could use to undo the sandbox's view of the disk.
_MOUNTS = (
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
)
# The kernel's keyrings, BPF programs, performance counters and userfaultfd (a favourite
# of kernel exploits), file handles that bypass path lookup.
_KERNEL = (
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "open_by_handle_at",
    "name_to_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
# The machine's own state: modules, kexec, clocks, swap, reboot, accounting, the log.
_MACHINE = (
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "clock_settime",
    "clock_adjtime",
    "settimeofday",
    "adjtimex",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "iopl",
    "ioperm",
    "vhangup",
)
REFUSED = _INTROSPECTION + _MOUNTS + _KERNEL + _MACHINE

_ALLOW = 0x7FFF0000  # SCMP_ACT_ALLOW
_CMP_MASKED_EQ = 7  # SCMP_CMP_MASKED_EQ
CLONE_NEWUSER = 0x10000000


def _errno(number: int) -> int:
    return 0x00050000 | (number & 0xFFFF)  # SCMP_ACT_ERRNO(number)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class SeccompUnavailable(RuntimeError):
    """libseccomp is missing or refused the filter: commands cannot be confined."""


def _library() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp is not installed ({exc})") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def _add(lib: ctypes.CDLL, context: int, action: int, name: str, *args: _ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # not a call on this architecture (e.g. iopl on arm64): nothing to refuse
        return
    array = (_ArgCmp * len(args))(*args) if args else None
    if lib.seccomp_rule_add_array(context, action, number, len(args), array) != 0:
        raise SeccompUnavailable(f"libseccomp refused a rule for {name}")


@functools.cache
def refusing_filter() -> bytes:
    """The BPF program (cached: the same for every command this process starts)."""
    lib = _library()
    context = lib.seccomp_init(_ALLOW)
    if not context:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        for name in REFUSED:
            _add(lib, context, _errno(errno.EPERM), name)
        _add(lib, context, _errno(errno.ENOSYS), "clone3")
        new_user = _ArgCmp(0, _CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
        _add(lib, context, _errno(errno.EPERM), "clone", new_user)
        return _export(lib, context)
    finally:
        lib.seccomp_release(context)


def _export(lib: ctypes.CDLL, context: int) -> bytes:
    fd = os.memfd_create("iac-code-seccomp")
    try:
        if lib.seccomp_export_bpf(context, fd) != 0:
            raise SeccompUnavailable("seccomp_export_bpf failed")
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
