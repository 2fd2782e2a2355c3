"""The files a rewind reads, writes and removes, on a real disk: only inside the session's
directories, never through a symlink (a file's or a directory's on the way), never into a
file another name shares."""

import os
from pathlib import Path

import pytest

from adapters.workspace.disk_files import DiskFiles
from application.ports.checkpoints import PathRefused
from domain.checkpoints import Unrestorable


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_bytes(b"outside\n")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


async def refused(action: object, reason: Unrestorable) -> None:
    with pytest.raises(PathRefused) as caught:
        await action  # type: ignore[misc]
    assert caught.value.reason is reason


async def test_regular_files_are_read_written_with_their_directories_and_removed(
    project: Path,
) -> None:
    files, roots = DiskFiles(), (str(project),)
    target = project / "new" / "deeper" / "a.txt"
    assert await files.read(roots, str(target)) is None
    await files.write(roots, str(target), b"\xffbytes\r\n")
    assert target.read_bytes() == b"\xffbytes\r\n"
    assert await files.read(roots, str(target)) == b"\xffbytes\r\n"
    await files.remove(roots, str(target))
    await files.remove(roots, str(target))  # already gone: nothing
    assert not target.exists() and list((project / "new" / "deeper").iterdir()) == []


async def test_a_replaced_file_keeps_its_permission_bits(project: Path) -> None:
    script = project / "run.sh"
    script.write_bytes(b"#!/bin/sh\n")
    script.chmod(0o751)
    await DiskFiles().write((str(project),), str(script), b"#!/bin/sh\necho restored\n")
    assert (script.stat().st_mode & 0o777, script.read_bytes()) == (
        0o751,
        b"#!/bin/sh\necho restored\n",
    )


async def test_a_symlink_in_place_of_the_file_is_never_followed(
    project: Path, outside: Path
) -> None:
    link, roots = project / "a.txt", (str(project),)
    link.symlink_to(outside / "secret.txt")
    files = DiskFiles()
    await refused(files.read(roots, str(link)), Unrestorable.NOT_A_FILE)
    await refused(files.write(roots, str(link), b"restored"), Unrestorable.NOT_A_FILE)
    await refused(files.remove(roots, str(link)), Unrestorable.NOT_A_FILE)
    assert (outside / "secret.txt").read_bytes() == b"outside\n" and link.is_symlink()


async def test_a_symlinked_directory_on_the_way_is_never_followed(
    project: Path, outside: Path
) -> None:
    (project / "d").symlink_to(outside, target_is_directory=True)
    files, roots, path = DiskFiles(), (str(project),), str(project / "d" / "secret.txt")
    await refused(files.read(roots, path), Unrestorable.NOT_A_FILE)
    await refused(files.write(roots, path, b"restored"), Unrestorable.NOT_A_FILE)
    await refused(files.remove(roots, path), Unrestorable.NOT_A_FILE)
    deeper = str(project / "d" / "made" / "x.txt")
    await refused(files.write(roots, deeper, b"x"), Unrestorable.NOT_A_FILE)
    assert not (outside / "made").exists()
    assert (outside / "secret.txt").read_bytes() == b"outside\n"


async def test_a_path_outside_the_directories_is_refused(project: Path, outside: Path) -> None:
    files, roots = DiskFiles(), (str(project),)
    for path in (str(outside / "secret.txt"), str(project / ".." / "outside" / "secret.txt")):
        await refused(files.write(roots, path, b"x"), Unrestorable.OUTSIDE)
        await refused(files.read(roots, path), Unrestorable.OUTSIDE)
    await refused(files.write(roots, "relative.txt", b"x"), Unrestorable.OUTSIDE)
    assert (outside / "secret.txt").read_bytes() == b"outside\n"


async def test_an_extra_directory_and_a_directory_named_through_a_link_are_inside(
    tmp_path: Path, project: Path, outside: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(project, target_is_directory=True)  # the session's cwd, as given
    files, roots = DiskFiles(), (str(alias), str(outside))
    await files.write(roots, str(alias / "a.txt"), b"via the name given")
    await files.write(roots, str(project / "b.txt"), b"via the real path")
    await files.write(roots, str(outside / "secret.txt"), b"an extra directory")
    assert (project / "a.txt").read_bytes() == b"via the name given"
    assert (project / "b.txt").read_bytes() == b"via the real path"
    assert (outside / "secret.txt").read_bytes() == b"an extra directory"


async def test_a_hard_link_is_replaced_not_written_into(project: Path, outside: Path) -> None:
    shared = project / "shared.txt"
    os.link(outside / "secret.txt", shared)
    await DiskFiles().write((str(project),), str(shared), b"restored\n")
    assert shared.read_bytes() == b"restored\n"
    assert (outside / "secret.txt").read_bytes() == b"outside\n"


async def test_a_fifo_or_a_directory_is_not_a_file(project: Path) -> None:
    os.mkfifo(project / "pipe")
    (project / "dir").mkdir()
    files, roots = DiskFiles(), (str(project),)
    for name in ("pipe", "dir"):
        await refused(files.read(roots, str(project / name)), Unrestorable.NOT_A_FILE)
        await refused(files.write(roots, str(project / name), b"x"), Unrestorable.NOT_A_FILE)
        await refused(files.remove(roots, str(project / name)), Unrestorable.NOT_A_FILE)
    await refused(files.write(roots, str(project), b"x"), Unrestorable.OUTSIDE)
