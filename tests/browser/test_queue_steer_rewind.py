"""Input while the agent works (a prompt queued after the turn, a message steered into it)
and the rewind menu on a sent prompt, with its undo."""

from pathlib import Path

from playwright.async_api import Page, expect

from tests.browser.conftest import (
    BROWSER_TESTS,
    conversation,
    open_listed,
    send,
    serving,
    signed_in,
    start_session,
)

pytestmark = BROWSER_TESTS


async def test_queue_and_steer_while_a_turn_runs_then_rewind_and_undo(
    page: Page, tmp_path: Path, workdir: Path
) -> None:
    with serving(tmp_path, IAC_CODE_DEMO_PACE="40") as server:
        await signed_in(page, server)
        await start_session(page, workdir)
        await send(page, "tell me a long story")
        prompt = page.get_by_role("textbox", name="Prompt")
        await prompt.fill("queued question")
        await page.get_by_role("button", name="Queue", exact=True).click()
        await expect(page.get_by_role("list", name="Queued prompts")).to_contain_text(
            "queued question"
        )
        await prompt.fill("steered remark")
        await page.get_by_role("button", name="Steer", exact=True).click()
        talk = conversation(page)
        await expect(talk.locator("article.user")).to_contain_text(["steered remark"])
        await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled(
            timeout=120_000
        )
        await expect(talk).to_contain_text("You said: queued question")
        await expect(page.get_by_role("list", name="Queued prompts")).to_have_count(0)

        await page.reload()  # the stored history: each prompt with its message id
        await open_listed(page, workdir)
        users = conversation(page).locator("article.user")
        await expect(users.filter(has_text="queued question")).to_have_count(1)
        rewind = users.filter(has_text="queued question").get_by_role(
            "button", name="Rewind to before this prompt"
        )
        await rewind.click()
        await expect(users.filter(has_text="queued question")).to_have_count(0)
        await expect(users.filter(has_text="tell me a long story")).to_have_count(1)
        await page.get_by_role("button", name="Undo rewind", exact=True).click()
        await expect(users.filter(has_text="queued question")).to_have_count(1)
        await expect(conversation(page)).to_contain_text("You said: queued question")
