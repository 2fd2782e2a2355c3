"""What the scan before and after a command sees, and which prior bytes it can give back:
a real directory, a real git repository."""

import os
import subprocess
from pathlib import Path

from adapters.workspace.file_scan import MtimeScanner
from application.ports.checkpoints import ScannedChange


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

    watch = await MtimeScanner().watch((str(tmp_path),))
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
        "dirty.txt": ScannedChange(path=str(tmp_path / "dirty.txt"), existed=True),
        "untracked.txt": ScannedChange(path=str(tmp_path / "untracked.txt"), existed=True),
        "made.txt": ScannedChange(path=str(tmp_path / "made.txt"), existed=False),
    }


async def test_outside_git_only_created_files_have_a_known_prior(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_bytes(b"old\n")
    watch = await MtimeScanner().watch((str(tmp_path),))
    touched(tmp_path / "old.txt", b"new\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "made.txt").write_bytes(b"made\n")
    assert await watch.changes() == (
        ScannedChange(path=str(tmp_path / "old.txt"), existed=True),
        ScannedChange(path=str(tmp_path / "sub" / "made.txt"), existed=False),
    )
