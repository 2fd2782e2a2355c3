"""Run by a bash tool in the e2e tests: try every way of reading another process's memory
and open files, and print what each attempt came to as JSON.

    python memory_probe.py PID REVERSED_NEEDLE

"read" means the attempt succeeded; otherwise the name of the error. `found` says whether
the needle (given reversed, so that this command line does not carry it) is in the target's
readable memory (`mem_found`) or its environment block (`environ_found`); `self_mem` is the
control: the same reading of this process's own memory.
"""

import ctypes
import json
import os
import sys
from pathlib import Path


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def _readable(pid: int) -> list[tuple[int, int]]:
    spans = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            if perms.startswith("r") and "[vvar]" not in line and "[vsyscall]" not in line:
                low, high = (int(x, 16) for x in span.split("-"))
                spans.append((low, high))
    return spans


def _read_mem(pid: int, needle: bytes) -> bool:
    found = False
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for low, high in _readable(pid):
            tail = b""
            for start in range(low, high, 4 * 2**20):  # in pieces: the heap can be large
                try:
                    mem.seek(start)
                    data = tail + mem.read(min(4 * 2**20, high - start))
                except OSError as exc:
                    if exc.errno == 5:  # EIO: a part not backed by memory; the next one
                        break
                    raise
                found = found or needle in data
                tail = data[-len(needle) :]
    return found


def _vm_read(pid: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    low = _readable(pid)[0][0]
    buffer = ctypes.create_string_buffer(64)
    local = _IoVec(ctypes.cast(buffer, ctypes.c_void_p), 64)
    remote = _IoVec(low, 64)
    if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def main() -> None:
    pid, needle = int(sys.argv[1]), sys.argv[2][::-1].encode()
    out: dict[str, object] = {"mem_found": False, "environ_found": False}

    def attempt(name: str, action) -> None:  # type: ignore[no-untyped-def]
        try:
            result = action()
        except OSError as exc:
            out[name] = type(exc).__name__
            return
        out[name] = "read"
        if name in ("mem", "environ"):
            out[f"{name}_found"] = result

    attempt("mem", lambda: _read_mem(pid, needle))
    attempt("process_vm_readv", lambda: _vm_read(pid))
    attempt("environ", lambda: needle in Path(f"/proc/{pid}/environ").read_bytes())
    attempt(
        "fd", lambda: [os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd")]
    )
    attempt("self_mem", lambda: _read_mem(os.getpid(), b"-"))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
