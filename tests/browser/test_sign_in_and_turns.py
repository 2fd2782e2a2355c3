"""Signing in (the form, the one-time link), starting a session, a streamed reply, a
permission answered by clicking and the diff it shows, the mode, a slash command, cancel."""

from pathlib import Path

from playwright.async_api import Page, expect

from tests.browser.conftest import (
    BROWSER_TESTS,
    TOKEN,
    Server,
    conversation,
    open_listed,
    send,
    serving,
    signed_in,
    start_session,
)

pytestmark = BROWSER_TESTS

# Counts the distinct texts the agent's last message had while it streamed.
WATCH_STREAM = """() => {
  window.seenTexts = new Set();
  new MutationObserver(() => {
    const replies = document.querySelectorAll('article.agent');
    if (replies.length) window.seenTexts.add(replies[replies.length - 1].textContent);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


async def test_sign_in_with_the_form_refuses_a_wrong_token_and_keeps_it_in_the_tab(
    page: Page, server: Server
) -> None:
    await page.goto(server.base)
    token = page.get_by_label("Access token")
    await token.fill("not-the-token")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_have_text("That token was refused.")
    await token.fill(TOKEN)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("list", name="Sessions")).to_be_attached()
    kept = await page.evaluate("sessionStorage.getItem('iac-code.token')")
    await page.reload()  # the same tab: signed in still
    await expect(page.get_by_role("status")).to_have_text("Connected")
    assert kept == TOKEN


async def test_the_one_time_link_signs_in_and_leaves_the_address_bar(
    page: Page, server: Server
) -> None:
    await signed_in(page, server)
    assert page.url == f"{server.base}/"  # the token is gone from the address (replaced)
    assert await page.evaluate("sessionStorage.getItem('iac-code.token')") == TOKEN


async def test_a_new_session_streams_the_demo_reply(
    page: Page, tmp_path: Path, workdir: Path
) -> None:
    with serving(tmp_path, IAC_CODE_DEMO_PACE="400") as server:
        await signed_in(page, server)
        await start_session(page, workdir)
        await page.evaluate(WATCH_STREAM)
        await send(page, "Hello there")
        reply = conversation(page).locator("article.agent").last
        await expect(reply).to_contain_text("You said: Hello there")
        await expect(page.get_by_role("button", name="Send")).to_be_enabled()
        seen = await page.evaluate("window.seenTexts.size")
        await expect(conversation(page).get_by_text("Thinking")).to_be_visible()
        listed = page.get_by_role("list", name="Sessions").get_by_role("listitem")
        await expect(listed).to_have_count(1)
        await expect(listed).to_contain_text(str(workdir))
    assert seen >= 3  # the reply grew on screen, chunk by chunk


async def test_a_permission_answered_by_clicking_runs_the_tool_and_shows_its_diff(
    page: Page, server: Server, workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    await signed_in(page, server)
    await start_session(page, workdir)
    await send(page, "edit notes.txt: replace beta with delta")
    asked = page.get_by_role("dialog", name="Permission: Edit notes.txt")
    await expect(asked).to_contain_text('"old_string": "beta"')  # the tool's full input
    await asked.get_by_role("button", name="Allow once").click()
    await expect(asked).to_have_count(0)
    diff = conversation(page).get_by_label("Diff of ")
    await expect(diff.first).to_be_visible()
    removed = await diff.first.locator(".del").all_text_contents()
    added = await diff.first.locator(".add").all_text_contents()
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()
    assert (workdir / "notes.txt").read_text() == "alpha\ndelta\ngamma\n"
    assert [line.strip() for line in removed] == ["-beta"]
    assert [line.strip() for line in added] == ["+delta"]


async def test_the_mode_chosen_is_the_sessions_mode_when_opened_again(
    page: Page, server: Server, workdir: Path
) -> None:
    await signed_in(page, server)
    await start_session(page, workdir)
    await page.get_by_label("Mode", exact=True).select_option(label="Plan")
    await send(page, "create a.txt with x")  # plan mode: the write is refused, not asked
    await expect(page.get_by_role("button", name="Send")).to_be_enabled()
    await page.reload()
    await open_listed(page, workdir)
    await expect(page.get_by_label("Mode", exact=True)).to_have_value("plan")
    assert not (workdir / "a.txt").exists()


async def test_a_slash_command_is_picked_from_the_list_with_its_hint(
    page: Page, server: Server, workdir: Path
) -> None:
    await signed_in(page, server)
    await start_session(page, workdir)
    prompt = page.get_by_role("textbox", name="Prompt")
    await prompt.fill("/ren")
    choices = page.get_by_role("listbox", name="Slash commands")
    await expect(choices.get_by_role("option")).to_have_count(1)
    await expect(choices).to_contain_text("/rename")
    await prompt.press("Tab")
    await expect(prompt).to_have_value("/rename ")
    await expect(page.locator("#command-hint")).to_have_text("/rename title")
    await prompt.press_sequentially("Release notes")
    await prompt.press("Enter")
    await expect(page.get_by_role("heading", name="Release notes")).to_be_visible()
    listed = page.get_by_role("list", name="Sessions").get_by_role("listitem")
    await expect(listed.filter(has_text=str(workdir))).to_contain_text("Release notes")


async def test_cancel_stops_a_running_turn(page: Page, tmp_path: Path, workdir: Path) -> None:
    with serving(tmp_path, IAC_CODE_DEMO_PACE="4") as server:  # a reply of many seconds
        await signed_in(page, server)
        await start_session(page, workdir)
        await send(page, "what can you do")
        await expect(conversation(page).locator("article.agent")).to_be_visible()
        await page.get_by_role("button", name="Cancel", exact=True).click()
        await expect(page.get_by_role("status")).to_have_text("Turn cancelled.")
        await expect(page.get_by_role("button", name="Cancel", exact=True)).to_have_count(0)
        await expect(page.get_by_role("button", name="Send")).to_be_enabled()


async def test_rename_fork_and_delete_from_the_session_header(
    page: Page, server: Server, workdir: Path
) -> None:
    await signed_in(page, server)
    await start_session(page, workdir)
    await send(page, "Hello")
    await expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()
    await page.get_by_role("button", name="Rename", exact=True).click()
    await page.get_by_label("New title").fill("Original")
    await page.get_by_role("button", name="Save", exact=True).click()
    await expect(page.get_by_role("heading", name="Original")).to_be_visible()
    listed = page.get_by_role("list", name="Sessions").get_by_role("listitem")
    ours = listed.filter(has_text=str(workdir))
    await expect(ours).to_have_count(1)
    await page.get_by_role("button", name="Fork", exact=True).click()
    await expect(ours).to_have_count(2)
    await expect(conversation(page)).to_contain_text("You said: Hello")  # the fork's history
    forked = await page.evaluate("window.iacCode.view.sessionId")
    await page.get_by_role("button", name="Delete", exact=True).click()
    await page.get_by_role("button", name="Delete for good", exact=True).click()
    await expect(ours).to_have_count(1)
    await expect(ours).to_contain_text("Original")
    remaining = await page.evaluate("window.iacCode.sessions.map(s => s.sessionId)")
    assert forked not in remaining


async def test_a_question_from_the_model_is_answered_in_a_form(
    page: Page, server: Server, workdir: Path
) -> None:
    await signed_in(page, server)
    await start_session(page, workdir)
    await send(page, "ask which colour: red, green")
    form = page.get_by_role("dialog", name="which colour")
    await form.get_by_role("radio", name="green").check()
    await form.get_by_role("button", name="Answer").click()
    await expect(conversation(page)).to_contain_text("Thanks: you answered green.")
    await expect(page.get_by_role("dialog")).to_have_count(0)


async def test_without_a_token_on_loopback_there_is_no_sign_in(
    page: Page, tmp_path: Path, workdir: Path
) -> None:
    with serving(tmp_path, IACCODE_ACP_HTTP_TOKEN="") as server:
        await page.goto(server.base)
        await expect(page.get_by_role("status")).to_have_text("Connected")
        await expect(page.get_by_role("button", name="Sign in")).to_have_count(0)
        await start_session(page, workdir)
        await send(page, "Hi")
        await expect(conversation(page)).to_contain_text("You said: Hi")
