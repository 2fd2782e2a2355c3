"""The web client's committed build output (adapters/http/web_client/dist/) is what its
source builds to: a fresh copy is built with `npm ci` + `npm run build`, as `make web` does,
and compared byte for byte. The check itself is tried on a small stand-in package, built
and then changed, so that it is known to catch a stale dist/. Skipped only without npm: CI
has npm and its registry."""

import json
import shutil
from pathlib import Path

import pytest

from tests.support.web_build import ADVICE, BuildFailed, build_differences, rebuilt

ROOT = Path(__file__).resolve().parents[2]
WEB_CLIENT = ROOT / "adapters" / "http" / "web_client"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
]

# A package with no dependencies (npm ci needs no network for it) whose build, like
# esbuild's, names its script after a hash of the content and links it from index.html.
BUILD_SCRIPT = """\
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
const code = readFileSync("src/app.js");
const name = `app-${createHash("sha256").update(code).digest("hex").slice(0, 8)}.js`;
rmSync("dist", { recursive: true, force: true });
mkdirSync("dist/assets", { recursive: true });
writeFileSync(`dist/assets/${name}`, code);
writeFileSync("dist/index.html", `<script type="module" src="/assets/${name}"></script>\\n`);
"""


def stand_in(root: Path, code: str) -> Path:
    package = root / "stand-in"
    (package / "src").mkdir(parents=True)
    manifest = {"name": "stand-in", "version": "1.0.0", "private": True}
    (package / "package.json").write_text(
        json.dumps({**manifest, "scripts": {"build": "node build.mjs"}}, indent=2)
    )
    lock = {**manifest, "lockfileVersion": 3, "requires": True, "packages": {"": manifest}}
    (package / "package-lock.json").write_text(json.dumps(lock, indent=2))
    (package / "build.mjs").write_text(BUILD_SCRIPT)
    (package / "src" / "app.js").write_text(code)
    return package


def committed_build(package: Path, scratch: Path) -> None:
    """What `make web` then `git add dist/` leaves: the package's own dist/, built."""
    shutil.copytree(rebuilt(package, scratch), package / "dist")


def test_a_dist_built_from_its_source_passes(tmp_path: Path) -> None:
    package = stand_in(tmp_path, "console.log('hello');\n")
    committed_build(package, tmp_path / "first")
    assert build_differences(package, tmp_path / "check") == []


def test_a_source_changed_after_the_build_is_caught(tmp_path: Path) -> None:
    package = stand_in(tmp_path, "console.log('hello');\n")
    committed_build(package, tmp_path / "first")
    (package / "src" / "app.js").write_text("console.log('changed');\n")
    found = build_differences(package, tmp_path / "check")
    assert "index.html: differs" in found
    assert sum(line.endswith("built, not committed") for line in found) == 1
    assert sum(line.endswith("committed, not built") for line in found) == 1


def test_a_hand_edited_dist_is_caught(tmp_path: Path) -> None:
    package = stand_in(tmp_path, "console.log('hello');\n")
    committed_build(package, tmp_path / "first")
    (package / "dist" / "index.html").write_bytes(
        (package / "dist" / "index.html").read_bytes() + b" "
    )
    (package / "dist" / "stray.txt").write_text("left over")
    found = build_differences(package, tmp_path / "check")
    assert found == ["stray.txt: committed, not built", "index.html: differs"]


def test_a_build_that_fails_says_so_with_npms_output(tmp_path: Path) -> None:
    package = stand_in(tmp_path, "")
    (package / "build.mjs").write_text("throw new Error('no such entry point');\n")
    with pytest.raises(BuildFailed, match="no such entry point"):
        build_differences(package, tmp_path / "check")


@pytest.mark.skipif(
    not (WEB_CLIENT / "package.json").exists(),
    reason="no web client source in this tree yet (issue 33's page lands separately)",
)
def test_the_committed_web_client_is_its_source_built(tmp_path: Path) -> None:
    found = build_differences(WEB_CLIENT, tmp_path)
    assert not found, f"{ADVICE}:\n" + "\n".join(found)
