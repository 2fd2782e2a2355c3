"""What the scan before and after a command sees, and which prior bytes it can give back:
a real directory, a real git repository."""

import os
import subprocess
from pathlib import Path

import pytest

from adapters.workspace import file_scan
from adapters.workspace.file_scan import SnapshotScanner
from application.ports.checkpoints import ScannedChange
from domain.checkpoints import FILE_LIMIT, Unrestorable

BUDGET = 10_000_000


def scanner(max_bytes: int = BUDGET) -> SnapshotScanner:
    return SnapshotScanner(max_bytes=max_bytes)


def git(workdir: Path, *arguments: str) -> None:
    base = ["git", "-C", str(workdir), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*base, *arguments], check=True, capture_output=True)


def touched(path: Path, content: bytes) -> None:
    """Write `content` with an mtime that differs from before, whatever the clock's grain."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_bytes(content)
    os.utime(path, ns=(before + 10**9, before + 10**9))


async def test_created_changed_and_deleted_files_with_the_prior_bytes_git_holds(
    tmp_path: Path,
) -> None:
    for name, content in (("tracked.txt", b"committed\n"), ("dirty.txt", b"committed\n")):
        (tmp_path / name).write_bytes(content)
    (tmp_path / "gone.txt").write_bytes(b"tracked, to delete\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    touched(tmp_path / "dirty.txt", b"changed before the command\n")
    (tmp_path / "untracked.txt").write_bytes(b"never committed\n")
    (tmp_path / "same.txt").write_bytes(b"left alone\n")

    watch = await scanner().watch((str(tmp_path),))
    touched(tmp_path / "tracked.txt", b"by the command\n")
    touched(tmp_path / "dirty.txt", b"by the command too\n")
    touched(tmp_path / "untracked.txt", b"by the command as well\n")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "made.txt").write_bytes(b"new\n")
    (tmp_path / ".git" / "scratch").write_bytes(b"git's own files are not looked at")

    changes = {Path(c.path).name: c for c in await watch.changes()}
    assert changes == {
        "tracked.txt": ScannedChange(
            path=str(tmp_path / "tracked.txt"), existed=True, prior=b"committed\n"
        ),
        "gone.txt": ScannedChange(
            path=str(tmp_path / "gone.txt"), existed=True, prior=b"tracked, to delete\n"
        ),
        # Read before the command: git does not hold what they held.
        "dirty.txt": ScannedChange(
            path=str(tmp_path / "dirty.txt"), existed=True, prior=b"changed before the command\n"
        ),
        "untracked.txt": ScannedChange(
            path=str(tmp_path / "untracked.txt"), existed=True, prior=b"never committed\n"
        ),
        "made.txt": ScannedChange(path=str(tmp_path / "made.txt"), existed=False),
    }


async def test_outside_git_the_files_a_command_changes_have_a_known_prior(
    tmp_path: Path,
) -> None:
    (tmp_path / "old.txt").write_bytes(b"old\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "gone.txt").write_bytes(b"gone\n")
    watch = await scanner().watch((str(tmp_path),))
    touched(tmp_path / "old.txt", b"new\n")
    (tmp_path / "sub" / "gone.txt").unlink()
    (tmp_path / "sub" / "made.txt").write_bytes(b"made\n")
    assert await watch.changes() == (
        ScannedChange(path=str(tmp_path / "old.txt"), existed=True, prior=b"old\n"),
        ScannedChange(path=str(tmp_path / "sub" / "gone.txt"), existed=True, prior=b"gone\n"),
        ScannedChange(path=str(tmp_path / "sub" / "made.txt"), existed=False),
    )


async def test_a_file_changed_in_place_with_its_mtime_and_size_kept_is_still_seen(
    tmp_path: Path,
) -> None:
    """The stamp holds the ctime, which no write can keep."""
    (tmp_path / "same.txt").write_bytes(b"aaaa")
    stamp = (tmp_path / "same.txt").stat()
    watch = await scanner().watch((str(tmp_path),))
    (tmp_path / "same.txt").write_bytes(b"bbbb")
    os.utime(tmp_path / "same.txt", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert await watch.changes() == (
        ScannedChange(path=str(tmp_path / "same.txt"), existed=True, prior=b"aaaa"),
    )


async def test_what_is_not_read_says_why(tmp_path: Path) -> None:
    """Binary, over the per-file limit, ignored by git, past the snapshot's budget."""
    (tmp_path / ".gitignore").write_bytes(b"build/\n")
    git(tmp_path, "init", "-q")
    (tmp_path / "build").mkdir()
    names = {
        "logo.png": b"\x89PNG\0\0",
        "huge.txt": b"x" * (FILE_LIMIT + 1),
        "build/out.txt": b"ignored\n",
        "a.txt": b"a" * 60,
        "b.txt": b"b" * 60,
    }
    for name, content in names.items():
        (tmp_path / name).write_bytes(content)
    watch = await scanner(max_bytes=100).watch((str(tmp_path),))
    for name in names:
        touched(tmp_path / name, b"changed")
    (tmp_path / "build" / "new.txt").write_bytes(b"made in an ignored directory")
    changes = {Path(c.path).relative_to(tmp_path).as_posix(): c for c in await watch.changes()}
    assert changes["logo.png"].unknown is Unrestorable.BINARY
    assert changes["huge.txt"].unknown is Unrestorable.TOO_LARGE
    assert changes["build/out.txt"].unknown is Unrestorable.PRIOR_UNKNOWN
    assert not changes["build/new.txt"].existed  # seen: removed on restore
    read = [name for name in ("a.txt", "b.txt") if changes[name].prior == names[name]]
    assert len(read) == 1  # 100 bytes: one of the two, the other past the budget
    (unread,) = {"a.txt", "b.txt"} - set(read)
    assert (changes[unread].prior, changes[unread].unknown) == (None, Unrestorable.PRIOR_UNKNOWN)


async def test_a_command_reads_only_the_files_changed_since_the_one_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(5):
        (tmp_path / f"f{n}.txt").write_bytes(f"file {n}\n".encode())
    reads: list[str] = []
    real_read = file_scan._read

    def counted(name: str, parent: int, stamp: file_scan.Stamp) -> file_scan.Held | None:
        reads.append(name)
        return real_read(name, parent, stamp)

    monkeypatch.setattr(file_scan, "_read", counted)
    shared = scanner()
    await shared.watch((str(tmp_path),))
    assert sorted(reads) == [f"f{n}.txt" for n in range(5)]
    touched(tmp_path / "f2.txt", b"changed between the commands\n")
    reads.clear()
    watch = await shared.watch((str(tmp_path),))
    assert reads == ["f2.txt"]
    touched(tmp_path / "f2.txt", b"by the command\n")
    assert await watch.changes() == (
        ScannedChange(
            path=str(tmp_path / "f2.txt"), existed=True, prior=b"changed between the commands\n"
        ),
    )


async def test_symlinks_are_neither_walked_nor_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"outside\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "linked").symlink_to(outside, target_is_directory=True)
    (project / "link.txt").symlink_to(outside / "secret.txt")
    shared = scanner()
    watch = await shared.watch((str(project),))
    touched(outside / "secret.txt", b"changed outside\n")
    assert await watch.changes() == ()
    assert shared.prior.size == 0
