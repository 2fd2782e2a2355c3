"""A file reached inside a set of directories without following a symlink: what a rewind
reads, writes and removes (never a path outside the session's directories).

The path must lie, as written (normalised), under one of the directories or under its real
path. From that directory's real path, each directory on the way is opened relative to the
one before with O_DIRECTORY | O_NOFOLLOW, so a symlink anywhere below it (the file, or a
directory on the way) refuses the path instead of being followed; so does anything else
that is not a directory on the way, or not a regular file at the end (a FIFO is opened
O_NONBLOCK: it never blocks a read).

A write goes to a new file in the same directory, renamed over the name: the link or hard
link that may stand there is replaced, never written through; the replaced file's
permission bits are kept. Linux and macOS (POSIX `*at` calls through `dir_fd`)."""

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from application.ports.checkpoints import PathRefused
from domain.checkpoints import Unrestorable

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Errors that mean "a symlink (or not a directory) stands here", as Linux, macOS and the
# BSDs give them for O_NOFOLLOW.
NOT_FOLLOWED = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})


class _Absent(Exception):
    """A directory on the way is missing: so is the file."""


def read(directories: tuple[str, ...], path: str) -> bytes | None:
    top, parts = _located(directories, path)
    try:
        with _parent(path, top, parts, create=False) as parent:
            return _read_in(path, parent, parts[-1])
    except _Absent:
        return None


def write(directories: tuple[str, ...], path: str, content: bytes) -> None:
    top, parts = _located(directories, path)
    try:
        with _parent(path, top, parts, create=True) as parent:
            _replace(path, parent, parts[-1], content)
    except _Absent as exc:  # a directory made on the way was removed meanwhile
        raise PathRefused(path, Unrestorable.NOT_A_FILE) from exc


def _replace(path: str, parent: int, name: str, content: bytes) -> None:
    mode = _mode_of(path, parent, name)
    temporary = f".iac-code-restore-{secrets.token_hex(8)}"
    _write_new(parent, temporary, content, mode)
    try:
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError as exc:  # a directory put there since it was looked at
        with suppress(OSError):
            os.unlink(temporary, dir_fd=parent)
        raise PathRefused(path, Unrestorable.NOT_A_FILE) from exc


def remove(directories: tuple[str, ...], path: str) -> None:
    top, parts = _located(directories, path)
    try:
        with _parent(path, top, parts, create=False) as parent:
            if _mode_of(path, parent, parts[-1]) is not None:
                with suppress(FileNotFoundError):
                    os.unlink(parts[-1], dir_fd=parent)
    except _Absent:
        return


def _located(directories: tuple[str, ...], path: str) -> tuple[str, list[str]]:
    """The real path of the directory holding `path`, and the names below it."""
    normal = os.path.normpath(path)
    if os.path.isabs(normal):
        for directory in directories:
            real = os.path.realpath(directory)
            for top in (os.path.normpath(directory), real):
                if normal.startswith(top.rstrip(os.sep) + os.sep):
                    return real, normal[len(top.rstrip(os.sep)) + 1 :].split(os.sep)
    raise PathRefused(path, Unrestorable.OUTSIDE)


@contextmanager
def _parent(path: str, top: str, parts: list[str], *, create: bool) -> Iterator[int]:
    """The directory holding the file, opened; missing ones made when `create`."""
    descriptor = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            below = _open_directory(path, descriptor, name, create=create)
            os.close(descriptor)
            descriptor = below
        yield descriptor
    finally:
        os.close(descriptor)


def _open_directory(path: str, parent: int, name: str, *, create: bool) -> int:
    try:
        return os.open(name, DIRECTORY, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise _Absent from None
    except OSError as exc:
        if exc.errno in NOT_FOLLOWED:
            raise PathRefused(path, Unrestorable.NOT_A_FILE) from exc
        raise
    with suppress(FileExistsError):  # made meanwhile: opened below, refused if not a directory
        os.mkdir(name, dir_fd=parent)
    return _open_directory(path, parent, name, create=False)


def _read_in(path: str, parent: int, name: str) -> bytes | None:
    try:
        descriptor = os.open(name, READ, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in NOT_FOLLOWED:
            raise PathRefused(path, Unrestorable.NOT_A_FILE) from exc
        raise
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            with open(descriptor, "rb", closefd=False) as file:
                return file.read()
    finally:
        os.close(descriptor)
    raise PathRefused(path, Unrestorable.NOT_A_FILE)


def _mode_of(path: str, parent: int, name: str) -> int | None:
    """The permission bits of the regular file `name`; None when there is none. Refuses
    anything else standing there."""
    try:
        status = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(status.st_mode):
        raise PathRefused(path, Unrestorable.NOT_A_FILE)
    return stat.S_IMODE(status.st_mode)


def _write_new(parent: int, name: str, content: bytes, mode: int | None) -> None:
    descriptor = os.open(name, NEW, 0o666, dir_fd=parent)
    try:
        with open(descriptor, "wb", closefd=False) as file:
            file.write(content)
        if mode is not None:
            os.fchmod(descriptor, mode)
    except BaseException:
        with suppress(OSError):
            os.unlink(name, dir_fd=parent)
        raise
    finally:
        os.close(descriptor)
