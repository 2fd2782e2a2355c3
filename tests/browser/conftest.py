"""The browser client in real headless Chromium (Debian's /usr/bin/chromium, driven by
Playwright; never a downloaded browser) against a real `iac-code acp --transport http`
process: its own port, config directory and SQLite database per test."""

import fcntl
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.support.http_process import TOKEN, Server, serving
from tests.support.patience import PATIENCE

CHROMIUM = Path("/usr/bin/chromium")
WEB_CLIENT = Path(__file__).resolve().parents[2] / "adapters" / "http" / "web_client"

# Each test module's pytestmark (a conftest's own is not applied to tests).
BROWSER_TESTS = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (CI installs it)"),
]

expect.set_options(timeout=PATIENCE * 1000)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The demo model at once (IAC_CODE_DEMO_PACE=0), shared by a module's tests: each
    works in a directory of its own."""
    with serving(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A fresh tab; any script error on the page fails the test."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    tab = await context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
    try:
        yield tab
    finally:
        await context.close()
    assert errors == []


async def signed_in(page: Page, server: Server) -> None:
    """The page opened with the one-time link, showing the session list."""
    await page.goto(f"{server.base}/#token={TOKEN}")
    await expect(page.get_by_role("list", name="Sessions")).to_be_attached()
    await expect(page.get_by_role("status")).to_have_text("Connected")


async def open_listed(page: Page, workdir: Path) -> None:
    """Open the listed session that works in `workdir`."""
    listed = page.get_by_role("list", name="Sessions").get_by_role("listitem")
    await listed.filter(has_text=str(workdir)).get_by_role("button").click()
    await expect(page.get_by_role("textbox", name="Prompt")).to_be_visible()


async def start_session(page: Page, workdir: Path) -> None:
    await page.get_by_role("textbox", name="Directory", exact=True).fill(str(workdir))
    await page.get_by_role("button", name="Start session").click()
    await expect(page.get_by_role("textbox", name="Prompt")).to_be_visible()


async def send(page: Page, text: str) -> None:
    prompt = page.get_by_role("textbox", name="Prompt")
    await expect(prompt).to_be_enabled()
    await prompt.fill(text)
    await prompt.press("Enter")


def conversation(page: Page):  # type: ignore[no-untyped-def]
    return page.get_by_role("region", name="Conversation")


def axe_source() -> Path:
    """axe-core from the web client's lockfile (`npm ci` there if node_modules is absent:
    nothing is vendored). One test worker installs; the others wait for it (a lock file)."""
    script = WEB_CLIENT / "node_modules" / "axe-core" / "axe.min.js"
    if script.exists():
        return script
    npm = shutil.which("npm")
    assert npm, "axe-core is installed with npm from the web client's lockfile: no npm"
    with (WEB_CLIENT / ".npm-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not script.exists():
            subprocess.run(
                [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                cwd=WEB_CLIENT,
                check=True,
                timeout=600,
            )
    return script
