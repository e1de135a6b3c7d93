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


def register(page, url: str, name: str) -> None:
    """Open the page and create an account (signed in after it)."""
    page.goto(url)
    page.fill("#username", f"{name}-{uuid.uuid4().hex[:6]}")
    page.fill("#password", "a long password")
    page.click("#register-btn")


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
        register(page, url, "stopper")
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
        register(page, url, "maths")
        page.fill("#question", "What does a residual block learn?")
        page.press("#question", "Enter")
        # the final answer is shown (the reader embeds three papers' passages first: slow on a busy CPU)
        expect(page.locator(".msg.assistant .actions")).to_be_visible(timeout=60_000)
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


def test_interview_a_paper_from_its_source_card(make_app, browser) -> None:
    from playwright.sync_api import expect

    journalist = [
        "Why were very deep plain networks worse than shallow ones?",
        "What exactly does a shortcut connection add to a block?",
        "Which assumption about identity mappings does the method rely on?",
        "How were the ImageNet results measured?",
        "What limitation do the authors admit?",
    ]
    replies = [step("final_answer"), RESNET]
    replies += [journalist[0], "Very deep plain networks were hard to train [1]."]
    replies += ["You asked well: shortcut connections add the input back [2]."]  # the reader's question
    for q in journalist[1:]:
        replies += [q, "Residual blocks learn a residual function [1]."]
    replies += ["This one is stopped halfway through its answer."]
    model = PausingModel(replies, pause_at=-1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with live_server(make_app(model=model)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        register(page, url, "interviewer")
        page.fill("#question", "What problem do deep residual networks solve?")
        page.press("#question", "Enter")
        card = page.locator(".sources .source-card").first
        expect(card.locator(".interview-btn")).to_be_visible()

        # the journalist's first question; the reader steps in while the author answers it
        model.pause_at = 2
        card.locator(".interview-btn").click()
        panel = page.locator("#interview-panel")
        expect(panel).to_be_visible()
        expect(panel.locator("#interview-title")).to_have_text(
            "Interview: Deep Residual Learning for Image Recognition"
        )
        assert model.halfway.wait(30)
        expect(panel.locator(".exchange .q").first).to_have_text(f"Journalist: {journalist[0]}")
        panel.locator("#interview-question").fill("How do shortcut connections help?")
        panel.locator("#interview-question").press("Enter")
        expect(panel.locator("#interview-status")).to_have_text("Your question comes next.")
        model.gate.set()

        # five journalist rounds and the reader's own, each with its passages
        expect(panel.locator(".exchange")).to_have_count(6, timeout=30_000)
        expect(panel.locator(".exchange .passages")).to_have_count(6, timeout=30_000)
        questions = panel.locator(".exchange .q")
        expect(questions.nth(1)).to_have_text("You: How do shortcut connections help?")
        expect(questions.nth(5)).to_have_text(f"Journalist: {journalist[4]}")
        expect(panel.locator(".exchange .answer").nth(1)).to_contain_text(
            "shortcut connections add the input"
        )
        expect(panel.locator("#interview-status")).to_have_text(
            "The journalist is done; ask the author yourself."
        )
        page.screenshot(path=str(ARTIFACTS / "web-interview.png"))

        # the transcript downloads as Markdown
        with page.expect_download() as download:
            panel.locator("#interview-download").click()
        transcript = Path(download.value.path()).read_text()
        assert transcript.startswith("# Interview: Deep Residual Learning for Image Recognition")
        assert "## 2. You: How do shortcut connections help?" in transcript
        assert transcript.count("## ") == 6 and "> [1] (1512.03385#" in transcript

        # the reader asks again, and stops the answer halfway (Esc)
        model.gate.clear()
        model.halfway.clear()
        panel.locator("#interview-question").fill("And the limits?")
        panel.locator("#interview-question").press("Enter")
        assert model.halfway.wait(30)
        with page.expect_response(lambda r: r.url.endswith("/interview/stop")) as stopping:
            page.keyboard.press("Escape")
        assert stopping.value.status == 202
        model.gate.set()
        expect(panel.locator(".exchange .stopped-note")).to_have_count(1)
        expect(panel.locator(".exchange .answer").nth(6)).to_have_text("This one")
        assert model.replies == [] and errors == []
        page.close()


def test_answers_carry_no_style_and_no_remote_images(make_app, browser) -> None:
    """The page's renderer drops <style> and images from other sites (a prompt-injected answer
    could restyle the page or beacon out); same-origin and data: images stay."""
    with live_server(make_app(model=PausingModel([], pause_at=-1))) as url:
        page = browser.new_page()
        page.goto(url)
        answer = (
            "Residual blocks [1].\n\n<style>body { display: none }</style>\n\n"
            '<img src="https://evil.example/beacon.png" alt="remote">'
            '<img src="//evil.example/b.png" alt="scheme-relative">'
            '<img src="/static/logo.svg" alt="local">'
            '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline">'
            '<p style="position:fixed">styled</p>'
        )
        html = page.evaluate("(text) => markdown(text)", answer)
        assert "Residual blocks" in html
        assert "<style" not in html and "display: none" not in html
        assert "evil.example" not in html
        assert 'alt="local"' in html and 'alt="inline"' in html
        assert "position:fixed" not in html and "styled" in html
        page.close()


def test_a_listing_is_shown_with_each_papers_title_sentence_and_card(make_app, browser) -> None:
    """'Which papers ...?' is answered from the papers' abstracts without a model: the page shows
    the list as it shows any answer (titles in bold, linked citations, one source card each)."""
    from playwright.sync_api import expect

    from tests.scripted_model import ScriptedModel

    model = ScriptedModel([])  # a model call would fail the turn
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with live_server(make_app(model=model)) as url:
        page = browser.new_context(viewport={"width": 1100, "height": 800}).new_page()
        register(page, url, "lister")
        expect(page.locator("#app-view")).to_be_visible()
        page.fill("#question", "Which papers here are about image classification with deep networks?")
        page.press("#question", "Enter")
        answer = page.locator(".msg.assistant .answer").first
        expect(answer).to_contain_text("These papers in the corpus fit your question:")
        for title in ("Deep Residual Learning for Image Recognition", "An Image is Worth 16x16 Words"):
            expect(answer.locator("strong", has_text=title)).to_be_visible()
        cards = page.locator(".msg.assistant .sources .source-card")
        expect(cards).to_have_count(answer.locator("li").count())
        page.screenshot(path=str(ARTIFACTS / "web-listing.png"), full_page=True)
        assert model.calls == []
