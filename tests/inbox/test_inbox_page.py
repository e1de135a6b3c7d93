"""The inbox on the page, in a real browser over the real app and the test corpus: a new reader's
first visit (three topics, the suggested papers rated, Done), the ranked inbox with its reasons and
👍 state, "More like this", a chosen day, an imported library, the feed's URL, and a 👍 on an
answer's source card after "Ask". CHATPAPERS_SHOTS=<folder> saves screenshots of the first visit
and the ranked inbox, at desktop and phone width."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import httpx
from defusedxml import ElementTree

from agent.llm.scripted import RuleModel
from tests.api import conftest as api_conftest
from tests.web import COLLECT_CSP_VIOLATIONS, live_server

browser = api_conftest.browser  # Debian's Chromium, as the chat page's tests drive it

ATOM = "{http://www.w3.org/2005/Atom}"
VISION = "2010.11929"  # ViT
RESNET = "1512.03385"
TOPICS = "image recognition with deep networks\nattention and transformers, knowledge distillation"
SHOTS = os.environ.get("CHATPAPERS_SHOTS")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
LIBRARY = (
    "@article{vaswani, title={Attention is {All} you Need}, author={Vaswani, A.}, year={2017}}\n"
    "@book{knuth, title={The Art of Computer Programming}, author={Knuth, D.}}\n"
)


def shoot(page, name: str, full_page: bool = True) -> None:
    """A screenshot at desktop width and at phone width, when CHATPAPERS_SHOTS names a folder."""
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS) / f"{name}-desktop.png"), full_page=full_page)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(Path(SHOTS) / f"{name}-phone.png"), full_page=full_page)
    page.set_viewport_size(DESKTOP)


def watch(page) -> list[str]:
    """The page's errors and failed requests as they happen; CSP violations collect in
    `window.__csp`. (The page has no icon: the browser's own request for one answers 404.)"""
    errors: list[str] = []

    def console(message) -> None:
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            errors.append(message.text)

    def response(res) -> None:
        if res.status >= 400 and not res.url.endswith("/favicon.ico"):
            errors.append(f"{res.status} {res.url}")

    page.on("console", console)
    page.on("response", response)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.add_init_script(COLLECT_CSP_VIOLATIONS)
    return errors


def fetch_json(page, path: str):
    """GET `path` with the page's own session."""
    return page.evaluate("async (path) => (await fetch(path)).json()", path)


def ratings_of(page) -> dict[str, int]:
    inbox = fetch_json(page, "/api/inbox?since=2000-01-01T00:00:00Z&limit=100")
    return {p["paper_id"]: p["rating"] for p in inbox["papers"]}


def test_first_visit_ranked_inbox_more_like_this_feed_and_ask(make_app, browser) -> None:
    from playwright.sync_api import expect

    with live_server(make_app(model=RuleModel(), auth="password")) as url:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch(page)
        page.goto(url)
        page.fill("#username", f"reader-{uuid.uuid4().hex[:6]}")
        page.fill("#password", "a long password")
        page.click("#register-btn")
        expect(page.locator("#app-view")).to_be_visible()
        expect(page.locator("#chat-view")).to_be_visible()  # the chat comes first, as before

        # 1. the first visit: what do you follow?
        page.click("#inbox-open")
        expect(page.locator("#inbox-view")).to_be_visible()
        expect(page.locator("#chat-view")).to_be_hidden()
        expect(page.locator("#inbox-open")).to_have_attribute("aria-current", "page")
        start = page.locator("#inbox-start")
        expect(start).to_be_visible()
        expect(page.locator("#inbox-main")).to_be_hidden()
        expect(start.locator("h4")).to_have_text("1. What do you follow?")
        page.locator("#start-continue").click()  # nothing typed: asked for a topic
        expect(start.locator(".error")).to_have_text("Type a topic or two, or import your library.")
        page.fill("#start-topics", TOPICS)
        shoot(page, "inbox-start-topics")
        page.locator("#start-continue").click()

        # 2. rate the papers offered (up to ten; the corpus has seven): 👍 the first three, 👎 the rest
        progress = page.locator("#start-progress")
        expect(progress).to_have_text(re.compile(r"^0 of \d+ rated$"))
        expect(start.locator(".start-done")).to_contain_text("knowledge distillation")
        cards = start.locator(".paper-card")
        offered = cards.count()
        assert 3 <= offered <= 7, offered
        shoot(page, "inbox-start-rate")
        chosen: dict[str, int] = {}
        for i in range(offered):
            card = cards.nth(i)
            expect(card.locator(".why")).not_to_be_empty()
            rating = 1 if i < 3 else -1
            card.locator(".rate.up" if rating == 1 else ".rate.down").click()
            chosen[card.get_attribute("data-paper")] = rating
            expect(progress).to_have_text(f"{i + 1} of {offered} rated")
        expect(cards.first.locator(".rate.up")).to_have_attribute("aria-pressed", "true")
        expect(cards.first.locator(".rate.down")).to_have_attribute("aria-pressed", "false")
        shoot(page, "inbox-start-rated")
        stored = ratings_of(page)
        assert {pid: stored[pid] for pid in chosen} == chosen  # every click is stored
        page.locator("#start-done").click()

        # 3. the ranked inbox: every card with its reason and its 👍 / 👎 as rated
        main = page.locator("#inbox-main")
        expect(main).to_be_visible()
        expect(start).to_be_hidden()
        expect(page.locator("#inbox-ranked")).to_have_text("your ratings")
        expect(page.locator("#inbox-window")).to_contain_text("New since")
        expect(page.locator("#inbox-window")).to_contain_text("7 papers")
        listed = page.locator("#inbox-list .paper-card")
        expect(listed).to_have_count(7)
        for i in range(7):
            card = listed.nth(i)
            expect(card.locator(".why")).not_to_be_empty()
            expect(card.locator(".paper-title a")).to_have_attribute("target", "_blank")
            rating = chosen.get(card.get_attribute("data-paper"), 0)
            expect(card.locator(".rate.up")).to_have_attribute("aria-pressed", str(rating == 1).lower())
            expect(card.locator(".rate.down")).to_have_attribute("aria-pressed", str(rating == -1).lower())
        liked = [pid for pid, r in chosen.items() if r == 1]
        assert listed.first.get_attribute("data-paper") in liked  # a 👍 paper leads
        # drawn, not emoji: a machine without an emoji font showed 👍 / 👎 as empty boxes
        thumbs = listed.first.locator("button.rate")
        expect(thumbs.locator("svg")).to_have_count(2)
        assert [t.strip() for t in thumbs.all_inner_texts()] == ["", ""]
        assert listed.first.locator("button.rate.up").bounding_box()["width"] >= 24
        vit = page.locator(f"#inbox-list .paper-card[data-paper='{VISION}']")
        expect(vit.locator(".paper-title a")).to_have_attribute("href", f"https://arxiv.org/abs/{VISION}")
        expect(vit.locator(".paper-meta .cat").first).not_to_be_empty()
        expect(vit.locator(".abstract")).not_to_be_empty()
        shoot(page, "inbox-ranked", full_page=False)
        page.set_viewport_size(PHONE)  # phone width: nothing wider than the screen, the ☰ menu
        expect(page.locator("#inbox-menu")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert page.evaluate("(b => b.scrollWidth <= b.clientWidth)(document.getElementById('inbox-scroll'))")
        page.click("#inbox-menu")
        expect(page.locator("#inbox-open")).to_be_in_viewport()
        page.click("#scrim", position={"x": PHONE["width"] - 20, "y": 400})  # beside the menu
        page.set_viewport_size(DESKTOP)

        # the pressed 👍 pressed again clears the rating; the list offers to re-rank
        first = listed.first
        pid = first.get_attribute("data-paper")
        first.locator(".rate.up").click()
        expect(first.locator(".rate.up")).to_have_attribute("aria-pressed", "false")
        expect(page.locator("#inbox-rerank")).to_be_visible()
        assert ratings_of(page)[pid] == 0
        first.locator(".rate.up").click()
        expect(first.locator(".rate.up")).to_have_attribute("aria-pressed", "true")
        assert ratings_of(page)[pid] == 1

        # 4. more like this: the papers nearest ViT, the other image paper first; and back
        vit.locator(".more-like").click()
        head = page.locator("#inbox-similar-head")
        expect(head).to_contain_text("Papers like “An Image is Worth 16x16 Words")
        expect(listed.first).to_have_attribute("data-paper", RESNET)
        expect(page.locator(f"#inbox-list .paper-card[data-paper='{VISION}']")).to_have_count(0)
        head.locator(".back").click()
        expect(head).to_be_hidden()
        expect(listed).to_have_count(7)

        # 5. a chosen day: nothing after every arrival, then the last 30 days again
        page.fill("#inbox-since", "2099-01-01")
        expect(page.locator("#inbox-empty")).to_contain_text("Nothing new since")
        expect(listed).to_have_count(0)
        page.locator("#inbox-empty button").click()
        expect(listed).to_have_count(7)

        # 6. your interests: the topics followed, a library imported, cited papers counted
        page.locator("#interests-tool summary").click()
        expect(page.locator("#topics-text")).not_to_be_empty()
        # in the order they were typed
        assert page.locator("#topics-text").input_value().split("\n") == [
            "image recognition with deep networks",
            "attention and transformers",
            "knowledge distillation",
        ]
        library = {"name": "mine.bib", "mimeType": "text/plain", "buffer": LIBRARY.encode()}
        page.set_input_files("#library-file", files=[library])
        report = page.locator("#library-report")
        # a paper rated in the first visit keeps that rating: the library does not overrule it
        attention = chosen.get("1706.03762", 0)
        expect(report.locator(".matched")).to_have_text(
            "Matched 1 of 2 BibTeX entries; "
            + ("0 newly rated up (1 you had rated keeps your rating)." if attention else "1 newly rated up.")
        )
        expect(report.locator(".unmatched li")).to_have_text(
            "The Art of Computer Programming — no arXiv id, and no paper with this title"
        )
        assert ratings_of(page)["1706.03762"] == (attention or 1)
        page.locator("#implicit-toggle").check()
        expect(page.locator("#implicit-toggle")).to_be_checked()
        page.wait_for_function(
            "async () => (await (await fetch('/api/inbox/profile')).json()).implicit === true"
        )

        # 7. the private feed: a URL that serves the inbox as Atom, until it is revoked
        page.locator("#feed-tool summary").click()
        page.click("#feed-new")
        feed_url = page.locator("#feed-url")
        expect(feed_url).to_have_value(re.compile(rf"^{url}/feeds/\S+$"))
        expect(page.locator("#feed-revoke")).to_be_visible()
        shoot(page, "inbox-interests-feed")
        served = httpx.get(feed_url.input_value())
        assert served.status_code == 200 and served.headers["content-type"].startswith("application/atom+xml")
        doc = ElementTree.fromstring(served.content)
        assert doc.tag == f"{ATOM}feed" and len(doc.findall(f"{ATOM}entry")) == 7
        page.click("#feed-revoke")
        expect(page.locator("#feed-show")).to_be_hidden()
        expect(page.locator("#feed-revoke")).to_be_hidden()
        assert httpx.get(feed_url.input_value()).status_code == 404

        # 8. Interview from the inbox: the interview panel on that paper
        vit.locator(".interview-btn").click()
        expect(page.locator("#interview-panel")).to_be_visible()
        expect(page.locator("#interview-title")).to_contain_text("Interview: An Image is Worth 16x16 Words")
        page.click("#interview-close")
        expect(page.locator("#interview-panel")).to_be_hidden()

        # 9. Ask: a new chat about the paper, its question sent; the answer's source card takes a 👍
        resnet = page.locator(f"#inbox-list .paper-card[data-paper='{RESNET}']")
        resnet.locator(".ask").click()
        expect(page.locator("#chat-view")).to_be_visible()
        expect(page.locator("#inbox-view")).to_be_hidden()
        expect(page.locator("#chat-title")).to_have_text("Deep Residual Learning for Image Recognition")
        expect(page.locator(".msg.user .text")).to_have_text(
            f"What does the paper “{page.locator('#chat-title').inner_text()}” propose, and how does it work?"
        )
        source = page.locator(".sources .source-card").first
        expect(source.locator(".rating")).to_be_visible(timeout=60_000)
        cited = source.locator(".rating").get_attribute("data-paper")
        before = ratings_of(page)[cited]
        # the card shows what the page knows of the paper's rating; pressing it toggles
        expect(source.locator(".rate.up")).to_have_attribute("aria-pressed", str(before == 1).lower())
        button, wanted = (".rate.down", -1) if before == 1 else (".rate.up", 1)
        source.locator(button).click()
        expect(source.locator(button)).to_have_attribute("aria-pressed", "true")
        assert ratings_of(page)[cited] == wanted
        expect(page.locator("#chat-list li.active")).to_contain_text("Deep Residual Learning")

        # the inbox again: the same window, the rating from the chat shown on its card
        page.click("#inbox-open")
        card = page.locator(f"#inbox-list .paper-card[data-paper='{cited}']")
        expect(card.locator(button)).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#chat-list li.active")).to_have_count(0)

        # 10. signed out, another reader: their own first visit, nothing of the first one's
        page.click("#feed-new")  # (the feed's box is still open)
        expect(feed_url).not_to_have_value("")
        page.click("#logout")
        page.fill("#username", f"second-{uuid.uuid4().hex[:6]}")
        page.fill("#password", "a long password")
        page.click("#register-btn")
        expect(page.locator("#chat-view")).to_be_visible()
        expect(page.locator("#chat-list li")).to_have_count(0)
        page.click("#inbox-open")
        expect(page.locator("#inbox-start")).to_be_visible()
        expect(feed_url).to_have_value("")
        expect(page.locator("#feed-show")).to_be_hidden()

        assert page.evaluate("window.__csp") == []
        assert errors == [], errors
        page.close()
