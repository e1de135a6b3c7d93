"""The chat page in a real browser: stopping an answer (button and Esc), a reloaded page that
follows the answer still being written, copy, edit and resend, regenerate, and Ctrl+K. The chat
model is scripted and paced by the test."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from tests.scripted_model import PausingModel, step
from tests.web import live_server

ARTIFACTS = Path(os.environ.get("CHATPAPERS_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))
EDITED = "Why are very deep plain networks hard to train?"
RESNET = "Residual learning lets very deep networks train: each block learns a residual function [1]."


def test_stop_reattach_copy_edit_regenerate(make_app, browser) -> None:
    from playwright.sync_api import expect

    replies = []
    for _ in range(4):
        replies += [step("final_answer", thought="The passages answer it"), RESNET]
    model = PausingModel(replies, pause_at=3)  # each answer waits at its fourth word for the gate
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with live_server(make_app(model=model)) as url:
        context = browser.new_context(viewport={"width": 1100, "height": 800})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.fill("#username", f"stopper-{uuid.uuid4().hex[:6]}")
        page.fill("#password", "a long password")
        page.click("#register-btn")
        expect(page.locator("#app-view")).to_be_visible()

        # 1. stop with Esc while the answer is being written: what was written stays, marked
        page.fill("#question", "What problem do deep residual networks solve?")
        page.press("#question", "Enter")
        assert model.halfway.wait(30)
        expect(page.locator("#stop")).to_be_visible()
        expect(page.locator("#send")).to_be_hidden()
        expect(page.locator(".msg.assistant .answer").first).to_have_text("Residual learning lets")
        with page.expect_response(lambda r: r.url.endswith("/stop")) as stopping:
            page.keyboard.press("Escape")
        assert stopping.value.status == 202
        expect(page.locator("#stop")).to_be_disabled()
        model.gate.set()
        first = page.locator(".msg.assistant").first
        expect(first.locator(".stopped-note")).to_have_text("Stopped: the answer is unfinished.")
        expect(first).to_have_class("msg assistant stopped")
        expect(first.locator(".answer")).to_have_text("Residual learning lets")
        expect(page.locator("#send")).to_be_visible()
        expect(page.locator("#stop")).to_be_hidden()

        # 2. a page reloaded mid-answer shows the question and follows the answer to its end
        model.gate.clear()
        model.halfway.clear()
        page.fill("#question", "How deep were the networks?")
        page.press("#question", "Enter")
        assert model.halfway.wait(30)
        page.reload()
        expect(page.locator(".msg.user")).to_have_count(2)
        expect(page.locator(".msg.user .text").nth(1)).to_have_text("How deep were the networks?")
        expect(page.locator(".msg.assistant")).to_have_count(2)
        second = page.locator(".msg.assistant").nth(1)
        expect(second.locator(".steps .step").first).to_contain_text("get_information_from_paper")  # replayed
        expect(second.locator(".answer")).to_have_text("Residual learning lets")
        expect(page.locator("#stop")).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / "web-reattached.png"), full_page=True)
        model.gate.set()
        expect(second.locator(".sources .source-card")).to_have_count(1)
        expect(second.locator(".answer")).to_contain_text("each block learns a residual function")
        expect(second).not_to_have_class("msg assistant stopped")

        # 3. copy the answer as Markdown
        second.locator(".actions .copy").click()
        expect(second.locator(".actions .copy")).to_have_text("Copied")
        assert "each block learns a residual function" in page.evaluate("navigator.clipboard.readText()")

        # 4. edit the first question and send it again: it and all after it are replaced
        page.locator(".msg.user").first.locator(".edit").click()
        editor = page.locator(".msg.user .edit-form textarea")
        expect(editor).to_have_value("What problem do deep residual networks solve?")
        editor.fill(EDITED)
        editor.press("Enter")
        expect(page.locator(".msg.user")).to_have_count(1)
        expect(page.locator(".msg.user .text")).to_have_text(EDITED)
        expect(page.locator(".msg.assistant .sources .source-card")).to_have_count(1)
        expect(page.locator(".msg.assistant")).not_to_have_class("msg assistant stopped")

        # 5. regenerate the newest answer; the reloaded chat agrees with the page
        expect(page.locator(".regenerate")).to_have_count(1)
        page.locator(".regenerate").click()
        expect(page.locator(".msg.assistant .sources .source-card")).to_have_count(1)
        expect(page.locator(".msg.user")).to_have_count(1)
        page.reload()
        expect(page.locator(".msg.user .text")).to_have_text(EDITED)
        expect(page.locator(".msg.assistant")).to_have_count(1)
        expect(page.locator(".regenerate")).to_have_count(1)
        assert model.replies == []  # four answers: stopped, followed, edited, regenerated

        # 6. Ctrl+K starts a new chat
        expect(page.locator("#chat-list li")).to_have_count(1)
        page.keyboard.press("Control+k")
        expect(page.locator("#chat-list li")).to_have_count(2)
        expect(page.locator("#question")).to_be_focused()
        assert errors == []
        context.close()


def test_maths_is_rendered_under_the_page_policy(make_app, browser) -> None:
    from playwright.sync_api import expect

    answer = (
        "Each block learns $F(x) = H(x) - x$ instead of $H(x)$ [1], so the output is\n\n"
        "$$y = F(x, \\{W_i\\}) + x$$\n\nA GPU hour costs $5 and a day $10; code stays code: `$HOME`."
    )
    model = PausingModel([step("final_answer"), answer], pause_at=-1)
    with live_server(make_app(model=model)) as url:
        page = browser.new_page(viewport={"width": 1000, "height": 700})
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(url)
        page.fill("#username", f"maths-{uuid.uuid4().hex[:6]}")
        page.fill("#password", "a long password")
        page.click("#register-btn")
        page.fill("#question", "What does a residual block learn?")
        page.press("#question", "Enter")
        expect(page.locator(".msg.assistant .actions")).to_be_visible()  # the final answer is shown
        shown = page.locator(".msg.assistant .answer")
        # (the grounding check may leave some of its sentences out: at least one formula stays)
        expect(shown.locator("math").first).to_be_visible()
        box = shown.locator("math").first.bounding_box()  # laid out by the browser: it has a size
        assert box and box["width"] > 20 and box["height"] > 8
        # the page's own renderer on the whole draft: inline and displayed maths, money, code
        html = page.evaluate("(text) => markdown(text)", answer)
        assert html.count("<math") == 3 and html.count('display="block"') == 1
        assert "A GPU hour costs $5 and a day $10" in html and "<code>$HOME</code>" in html
        assert "$" not in html.split("A GPU hour")[0]  # every formula was rendered
        page.screenshot(path=str(ARTIFACTS / "web-maths.png"))
        assert not [p for p in problems if "Content Security Policy" in p or "katex" in p.lower()], problems
        page.close()
