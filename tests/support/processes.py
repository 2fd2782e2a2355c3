"""This machine's processes as the tests see them, through /proc."""

from pathlib import Path


def survivors(marker: str) -> list[int]:
    """The pids of the processes whose command line starts with `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(
                marker.encode()
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found
