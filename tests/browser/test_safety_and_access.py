"""A hostile model reply renders inert; axe-core finds no serious violation on the main
screens, wide and 375 px narrow; and a screenshot of each (docs/screenshots/ when
IAC_CODE_UPDATE_SCREENSHOTS=1, else the test's temporary directory)."""

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import (
    BROWSER_TESTS,
    Server,
    axe_source,
    conversation,
    send,
    serving,
    signed_in,
    start_session,
)
from tests.e2e.conftest import anthropic_env
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use

pytestmark = BROWSER_TESTS

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

HOSTILE = (
    'Here you go <img src=x onerror="window.pwned=1;alert(1)"> and '
    "[a harmless link](javascript:window.pwned=2) and "
    '<a href="javascript:window.pwned=3">another</a> '
    "<script>window.pwned=4</script>"
    '<svg onload="window.pwned=5"></svg>'
    '<iframe src="javascript:window.parent.pwned=6"></iframe>'
    '<p onclick="window.pwned=7" id="clickme">click me</p>\n\n'
    "![tracker](https://tracker.example/pixel.png)\n\n"
    "```python\nprint('<b>not bold</b>')\n```\n"
)


async def test_a_hostile_reply_renders_inert(page: Page, tmp_path: Path, workdir: Path) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    with (
        ScriptedAnthropic(stream(text(HOSTILE))) as model,
        serving(tmp_path, **anthropic_env(model)) as server,
    ):
        await signed_in(page, server)
        await start_session(page, workdir)
        await send(page, "show me")
        reply = conversation(page).locator("article.agent")
        await expect(reply).to_contain_text("click me")
        await reply.get_by_text("a harmless link").click()
        await reply.get_by_text("another").click()
        await reply.get_by_text("click me").click()
        found: dict[str, Any] = await reply.evaluate(
            """(el) => ({
              pwned: window.pwned ?? null,
              scripts: el.querySelectorAll('script, iframe, svg, object, embed').length,
              handlers: [...el.querySelectorAll('*')].flatMap(n => [...n.attributes])
                .filter(a => a.name.startsWith('on')).length,
              hrefs: [...el.querySelectorAll('a')].map(a => a.getAttribute('href')),
              images: el.querySelectorAll('img').length,
              code: el.querySelector('pre code').textContent,
            })"""
        )
        image = reply.get_by_role("button", name="Load image from tracker.example: tracker")
        await expect(image).to_be_visible()
        tracked_before_click = [url for url in requested if "tracker.example" in url]
    assert found["pwned"] is None  # no handler, script or link ran (and no dialog opened)
    assert found["scripts"] == found["handlers"] == found["images"] == 0
    assert found["hrefs"] == [None, None]
    assert found["code"].strip() == "print('<b>not bold</b>')"
    assert tracked_before_click == []  # the remote image waits for a click


SCREENS = [("wide", 1280, 800), ("phone", 375, 740)]


@pytest.mark.parametrize(("name", "width", "height"), SCREENS)
async def test_the_main_screens_have_no_serious_accessibility_violation(
    browser: Browser,
    server: Server,
    workdir: Path,
    tmp_path: Path,
    name: str,
    width: int,
    height: int,
) -> None:
    (workdir / "notes.txt").write_text("alpha\nbeta\n")
    shots = SCREENSHOTS if os.environ.get("IAC_CODE_UPDATE_SCREENSHOTS") == "1" else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    # The page's policy refuses any script but its own: axe is let in by the test browser.
    context = await browser.new_context(
        viewport={"width": width, "height": height}, bypass_csp=True
    )
    page = await context.new_page()
    violations: dict[str, list[str]] = {}

    async def check(screen: str) -> None:
        await page.add_script_tag(path=str(axe_source()))
        found = await page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
            ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))"
        )
        violations[screen] = found
        await page.screenshot(path=str(shots / f"{screen}-{name}.png"))

    await page.goto(server.base)
    await expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    await check("sign-in")
    await signed_in(page, server)
    await check("sessions")
    await start_session(page, workdir)
    await send(page, "plan a release of the notes")
    await expect(conversation(page).locator("article.agent ol")).to_be_visible()
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()
    await send(page, "edit notes.txt: replace beta with gamma")
    await expect(page.get_by_role("dialog")).to_be_visible()
    await check("permission")
    await page.get_by_role("button", name="Allow once").click()
    await expect(conversation(page).get_by_label("Diff of ")).to_be_visible()
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()
    await check("session")
    overflow = await page.evaluate("document.documentElement.scrollWidth > innerWidth")
    await context.close()
    assert violations == {screen: [] for screen in violations}
    assert len(violations) == 4
    assert not overflow  # nothing wider than the screen


async def test_a_sub_agent_is_shown_inside_its_parents_turn(
    page: Page, tmp_path: Path, workdir: Path
) -> None:
    replies = (
        stream(
            tool_use("agent", {"prompt": "Where is alpha?", "description": "alpha"}, id="toolu_a"),
            stop_reason="tool_use",
        ),
        stream(text("alpha is in a.py")),  # the child's answer
        stream(text("The sub-agent found it.")),
    )
    with (
        ScriptedAnthropic(*replies) as model,
        serving(tmp_path, **anthropic_env(model)) as server,
    ):
        await signed_in(page, server)
        await start_session(page, workdir)
        await send(page, "find alpha")
        asked = page.get_by_role("dialog")
        await asked.get_by_role("button", name="Allow once", exact=True).click()
        await expect(conversation(page)).to_contain_text("The sub-agent found it.")
        child = conversation(page).locator("details.subagent")
        await expect(child.locator("summary")).to_contain_text("Sub-agent")
        await expect(child.locator("summary")).to_contain_text("alpha")
        await expect(child.locator("summary")).to_contain_text("end_turn")
        await child.locator("summary").click()
        await expect(child).to_contain_text("alpha is in a.py")
