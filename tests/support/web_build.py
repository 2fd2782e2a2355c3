"""Whether a front-end package's committed build output is what its source builds to.

The web client's built files are committed (adapters/http/web_client/dist/), so that a fresh
clone serves the page without Node.js and without the network. This rebuilds a copy of the
package the way `make web` does (`npm ci`, then `npm run build`) and compares its `dist/`
with the committed one, file by file, byte for byte."""

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

ADVICE = (
    "the committed build output is not what its source builds to: run `make web` and commit dist/"
)
SKIPPED_IN_COPY = ("node_modules", "dist")
NPM_TIMEOUT_SECONDS = 600  # npm ci downloads the toolchain: generous on a slow network


class BuildFailed(AssertionError):
    pass


def npm_env() -> dict[str, str]:
    """npm without its update check, audit and funding notes (noise, and network calls)."""
    return {
        **os.environ,
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "NPM_CONFIG_AUDIT": "false",
        "NPM_CONFIG_FUND": "false",
    }


def _npm(args: list[str], cwd: Path) -> None:
    npm = shutil.which("npm")
    assert npm is not None, "npm is not installed"
    result = subprocess.run(
        [npm, *args],
        cwd=cwd,
        env=npm_env(),
        capture_output=True,
        text=True,
        timeout=NPM_TIMEOUT_SECONDS,
        check=False,
    )
    if result.returncode != 0:
        raise BuildFailed(
            f"`npm {' '.join(args)}` in a copy of the package failed "
            f"(exit {result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )


def rebuilt(package: Path, scratch: Path) -> Path:
    """A copy of `package` (without node_modules and dist) in `scratch`, built; its dist/."""
    copy = scratch / package.name
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns(*SKIPPED_IN_COPY))
    _npm(["ci"], copy)
    _npm(["run", "build"], copy)
    return copy / "dist"


def files(root: Path) -> set[str]:
    if not root.is_dir():
        return set()
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def differences(committed: Path, built: Path) -> list[str]:
    """What differs between two build outputs, one line per file; empty when identical."""
    ours, theirs = files(committed), files(built)
    found = [f"{name}: built, not committed" for name in sorted(theirs - ours)]
    found += [f"{name}: committed, not built" for name in sorted(ours - theirs)]
    found += [
        f"{name}: differs"
        for name in sorted(ours & theirs)
        if not filecmp.cmp(committed / name, built / name, shallow=False)
    ]
    return found


def build_differences(package: Path, scratch: Path) -> list[str]:
    """How `package`'s committed dist/ differs from a fresh build of its source."""
    return differences(package / "dist", rebuilt(package, scratch))
