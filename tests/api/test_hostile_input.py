"""Hostile input against the real app and database: generated (Hypothesis) and hand-written bad
requests for every endpoint. Whatever is sent: no 5xx, errors are JSON with a `detail` for
people, nothing secret is echoed, security headers are on every answer, another user's chat is
never readable, and nothing is half-saved.

Hypothesis runs derandomized (the same examples on every run) so a failure is reproducible."""

from __future__ import annotations

import json
import uuid
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.llm.scripted import RuleModel
from corpus.text import one_line, unstorable
from tests.web import CSRF, csrf, sign_up

PASSWORD = "correct horse battery"  # the signed-in user's: must never come back in a response
HYPOTHESIS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Characters that broke or could break text handling: NUL, lone surrogates, controls, bidi
# overrides, BOM, line separators, and strings that mean something to SQL, HTML or paths.
NASTY = st.sampled_from(
    [
        "\x00",
        "\ud800",
        "\udfff",
        "\x1b[31m",
        "\u202e",
        "\ufeff",
        "\x7f",
        "\x85",
        "\u2028",
        "\r\n",
        "'; DROP TABLE chats; --",
        "<script>alert(1)</script>",
        "%00",
        "../../etc/passwd",
        "\\",
        "💥",
        "A" * 300,
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=12), NASTY), max_size=6).map("".join)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)


def body_for(fields: list[str]) -> st.SearchStrategy:
    """Bodies aimed at an endpoint: its own fields with any value, some of them nasty text, or any
    JSON at all."""
    return st.one_of(
        JSON,
        st.fixed_dictionaries({f: JSON for f in fields}),
        st.fixed_dictionaries({f: TEXT for f in fields}),
    )


def raw(value) -> bytes:
    # ensure_ascii: a lone surrogate travels as \\ud800, exactly as a hostile client would send it
    return json.dumps(value).encode()


def sane(res, *secrets: str) -> None:
    """The invariants every answer keeps."""
    assert res.status_code < 500, (res.status_code, res.text[:500])
    assert "content-security-policy" in res.headers
    if res.status_code >= 400 and res.request.method != "HEAD":  # HEAD: headers only
        assert res.headers["content-type"].startswith("application/json"), res.text[:200]
        assert isinstance(res.json()["detail"], str)
    for secret in secrets:
        if len(secret) >= 6:
            assert secret not in res.text


@pytest.fixture
def two_users(make_app):
    """A client signed in as alice (with a chat) and bob's chat id, on one app with a model
    that answers any question quickly."""
    app = make_app(model=RuleModel(), sends_per_minute=10_000)
    alice, bob = TestClient(app, raise_server_exceptions=False), TestClient(app)
    token = sign_up(alice, f"alice-{uuid.uuid4().hex[:6]}", PASSWORD)
    b_token = sign_up(bob, f"bob-{uuid.uuid4().hex[:6]}", "bobs own horse battery")
    bobs = bob.post("/api/chats", json={"title": "bob's private chat"}, headers={CSRF: b_token}).json()
    mine = alice.post("/api/chats", json={"title": "mine"}, headers={CSRF: token}).json()
    return app, alice, token, mine["chat_id"], bobs["chat_id"]


def _db(app):
    return app.state.chatpapers.db


def _no_half_saved(app) -> None:
    """Every stored title is one clean line; every question has its answer."""
    with _db(app).connect() as conn:
        for (title,) in conn.execute("SELECT title FROM chats"):
            assert unstorable(title) is None and title == one_line(title) and title
        for chat_id, roles in conn.execute(
            "SELECT chat_id, array_agg(role ORDER BY message_id) FROM messages GROUP BY chat_id"
        ):
            assert roles == ["user", "assistant"] * (len(roles) // 2), (chat_id, roles)


def test_any_body_to_chat_endpoints(two_users) -> None:
    app, client, token, chat_id, bobs = two_users
    targets = [
        ("POST", "/api/chats", ["title", "level"]),
        ("PATCH", f"/api/chats/{chat_id}", ["title", "level"]),
        ("PATCH", f"/api/chats/{bobs}", ["title", "level"]),
        ("POST", f"/api/chats/{chat_id}/messages", ["content"]),
        ("POST", f"/api/chats/{bobs}/messages", ["content"]),
    ]
    created = 0

    @HYPOTHESIS
    @given(target=st.sampled_from(targets), body=st.data())
    def check(target, body) -> None:
        nonlocal created
        method, path, fields = target
        value = body.draw(body_for(fields))
        res = client.request(
            method, path, content=raw(value), headers={CSRF: token, "Content-Type": "application/json"}
        )
        sane(res, PASSWORD)
        if bobs in path:
            assert res.status_code in (404, 413, 422), res.text  # never bob's chat
        if method == "POST" and path == "/api/chats" and res.status_code == 201:
            created += 1

    check()
    _no_half_saved(app)
    listed = client.get("/api/chats?limit=200").json()
    assert len(listed) == created + 1
    with _db(app).connect() as conn:
        title = conn.execute("SELECT title FROM chats WHERE chat_id = %s", (bobs,)).fetchone()[0]
    assert title == "bob's private chat"


def test_any_text_in_auth_endpoints(two_users) -> None:
    app = two_users[0]
    anon = TestClient(app, raise_server_exceptions=False)
    anon_token = csrf(anon)

    @HYPOTHESIS
    @given(
        path=st.sampled_from(["/api/auth/register", "/api/auth/login"]),
        body=body_for(["username", "password"]),
    )
    def check(path, body) -> None:
        res = anon.post(
            path, content=raw(body), headers={CSRF: anon_token, "Content-Type": "application/json"}
        )
        secrets = (
            [body["password"]] if isinstance(body, dict) and isinstance(body.get("password"), str) else []
        )
        sane(res, *secrets)

    check()


def test_any_path_and_query(two_users) -> None:
    app, client, token, chat_id, bobs = two_users
    pieces = st.one_of(TEXT, st.just(bobs), st.just(chat_id), st.just("1512.03385"), st.integers().map(str))

    @HYPOTHESIS
    @given(
        template=st.sampled_from(
            [
                "/api/papers/{}",
                "/api/papers/{}/chunks/{}",
                "/api/chats/{}/messages",
                "/api/chats/{}",
                "/api/chats?limit={}&before={}",
                "/static/{}",
                "/{}",
            ]
        ),
        parts=st.lists(pieces, min_size=2, max_size=2),
        method=st.sampled_from(["GET", "DELETE", "HEAD", "OPTIONS", "PUT"]),
    )
    def check(template, parts, method) -> None:
        # encoded as a browser would (NUL and surrogates as %00 and %ED%A0%80)
        encoded = [quote(p.encode("utf-8", "surrogatepass"), safe="") for p in parts]
        res = client.request(method, template.format(*encoded), headers={CSRF: token})
        sane(res, PASSWORD)
        if bobs in parts:
            assert "bob's private chat" not in res.text
        if method == "DELETE" and bobs in parts:
            assert res.status_code in (404, 405)

    check()
    with _db(app).connect() as conn:
        assert conn.execute("SELECT count(*) FROM chats WHERE chat_id = %s", (bobs,)).fetchone()[0] == 1


def test_any_header_and_cookie(two_users) -> None:
    app, client = two_users[:2]
    header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=40)

    @HYPOTHESIS
    @given(csrf_value=header_text, cookie=header_text, content_type=header_text)
    def check(csrf_value, cookie, content_type) -> None:
        stranger = TestClient(app, raise_server_exceptions=False)
        headers = {
            CSRF: csrf_value.encode("latin-1"),
            "Cookie": b"chatpapers_session=" + cookie.encode("latin-1"),
            "Content-Type": content_type.encode("latin-1"),
        }
        for method, path in (("POST", "/api/chats"), ("GET", "/api/chats"), ("GET", "/health")):
            sane(stranger.request(method, path, content=b"{}", headers=headers))
        # with the real session, a wrong token is refused and a right one with a bad type is a 4xx
        sane(client.post("/api/chats", content=b"{}", headers={CSRF: csrf_value.encode("latin-1")}))

    check()


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 20_000 + b"]" * 20_000,  # nested deeper than any parser's recursion
        b'{"content": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"content": 1' + b"0" * 20_000 + b"}",  # past Python's int digit limit
        b'{"content": "\\ud800"}',
        b'{"content": "\\u0000 hidden"}',
        b'{"content": "ok"',  # truncated
        b"\xff\xfe\x00{",  # not UTF-8
        b"",
        b"null",
        b'{"content": "a", "content": "\\u0000"}',  # duplicate keys: the last wins
    ],
)
def test_malformed_bodies(two_users, body: bytes) -> None:
    app, client, token, chat_id, _bobs = two_users
    for path in (f"/api/chats/{chat_id}/messages", "/api/chats", f"/api/chats/{chat_id}"):
        method = "PATCH" if path.endswith(chat_id) else "POST"
        res = client.request(
            method, path, content=body, headers={CSRF: token, "Content-Type": "application/json"}
        )
        sane(res, PASSWORD)
        if path.endswith("/messages"):  # the chat endpoints may ignore a `content` they do not take
            assert 400 <= res.status_code < 500
    _no_half_saved(app)
    assert client.get(f"/api/chats/{chat_id}/messages").json()["messages"] == []


def test_nul_and_surrogates_are_422_before_any_work(two_users) -> None:
    app, client, token, chat_id, _bobs = two_users
    model = app.state.chatpapers.llm()
    for bad in ("what is\x00 attention?", "\ud800 residual"):
        res = client.post(
            f"/api/chats/{chat_id}/messages",
            content=raw({"content": bad}),
            headers={CSRF: token, "Content-Type": "application/json"},
        )
        assert res.status_code == 422 and "content" in res.json()["detail"], res.text
        for method, path in (("POST", "/api/chats"), ("PATCH", f"/api/chats/{chat_id}")):
            titled = client.request(
                method,
                path,
                content=raw({"title": bad}),
                headers={CSRF: token, "Content-Type": "application/json"},
            )
            assert titled.status_code == 422 and "title" in titled.json()["detail"], titled.text
        assert (
            client.get(f"/api/papers/local:{quote(bad.encode('utf-8', 'surrogatepass'))}").status_code == 404
        )
    assert model.calls == 0 if hasattr(model, "calls") else True
    assert client.get(f"/api/chats/{chat_id}/messages").json()["messages"] == []
    # control characters in a title are made one clean line, not refused
    fixed = client.patch(
        f"/api/chats/{chat_id}", json={"title": " two\nlines\x1b[31m red\t"}, headers={CSRF: token}
    )
    assert fixed.status_code == 200 and fixed.json()["title"] == "two lines [31m red"
    assert client.post("/api/chats", json={"title": "\n\t\x01"}, headers={CSRF: token}).status_code == 422


def test_rejected_password_is_not_echoed(make_app) -> None:
    client = TestClient(make_app())
    token = csrf(client)
    secret = "hunter2-" + "x" * 993  # 1001 characters: over the limit
    for path in ("/api/auth/register", "/api/auth/login"):
        res = client.post(path, json={"username": "somebody", "password": secret}, headers={CSRF: token})
        assert res.status_code == 422 and "password" in res.json()["detail"]
        assert "hunter2" not in res.text and "input" not in res.json()["errors"][0]
    weird = client.post(
        "/api/auth/login", json={"username": "x", "password": ["hunter2-list"]}, headers={CSRF: token}
    )
    assert weird.status_code == 422 and "hunter2" not in weird.text


def test_errors_are_json_with_security_headers(make_app) -> None:
    client = TestClient(make_app(), raise_server_exceptions=False)
    for res in (
        client.get("/no/such/page"),
        client.put("/api/chats"),
        client.get("/api/chats"),  # 401
        client.post("/api/chats", json={}),  # 403
    ):
        sane(res)
        assert res.status_code in (401, 403, 404, 405)
    # a trailing slash is a 404, not a redirect to whatever Host the request named
    res = client.get("/api/chats/", headers={"Host": "evil.example"}, follow_redirects=False)
    assert res.status_code == 404 and "evil.example" not in res.headers.get("location", "")
    assert client.head("/").status_code == 200 and client.head("/health").status_code == 200
    policy = client.get("/").headers["content-security-policy"]
    assert "form-action 'none'" in policy and "object-src 'none'" in policy


def test_an_unexpected_error_is_a_json_500(make_app) -> None:
    app = make_app()

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret internals")

    res = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert res.status_code == 500 and res.json()["detail"].startswith("internal error")
    assert "secret internals" not in res.text and "content-security-policy" in res.headers


def test_any_text_in_transcripts_and_exports(two_users) -> None:
    """The download routes write text out (Markdown, BibTeX): any text a transcript carries, in
    any field, is a 422 or a file, never a 500; chats holding every kind of storable nasty text
    export as files."""
    app, client, token, chat_id, _ = two_users
    with _db(app).connect() as conn:
        paper_id = conn.execute("SELECT paper_id FROM papers LIMIT 1").fetchone()[0]
    passage = st.fixed_dictionaries({"n": st.integers(0, 20), "chunk_id": TEXT, "text": TEXT})
    exchange = st.fixed_dictionaries(
        {
            "asker": st.sampled_from(["journalist", "you"]),
            "question": TEXT,
            "answer": TEXT,
            "passages": st.lists(passage, max_size=2),
            "unsupported": st.lists(TEXT, max_size=2),
        }
    )

    @HYPOTHESIS
    @given(body=st.one_of(JSON, st.fixed_dictionaries({"exchanges": st.lists(exchange, max_size=3)})))
    def check(body) -> None:
        res = client.post(
            f"/api/papers/{paper_id}/interview/transcript.md",
            content=raw(body),
            headers={CSRF: token, "Content-Type": "application/json"},
        )
        sane(res, PASSWORD)
        assert res.status_code in (200, 413, 422), res.text[:200]

    check()
    for text in ("\u202e\u200bbidi", "\x1b[31mred", "line\u2028sep", "'; DROP TABLE chats; --", "💥"):
        client.patch(f"/api/chats/{chat_id}", json={"title": text}, headers={CSRF: token})
        client.post(f"/api/chats/{chat_id}/messages", json={"content": text}, headers={CSRF: token})
    for fmt in ("md", "bib"):
        res = client.get(f"/api/chats/{chat_id}/export.{fmt}")
        sane(res, PASSWORD)
        assert res.status_code == 200 and res.content
