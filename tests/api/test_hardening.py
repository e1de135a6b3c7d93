"""Second hostile pass: one canonical form of a username for the limiter and the database,
look-alike names, lockouts that outlive a restart, text that cannot be encoded, the HTTP edge
(chunked bodies, slow bodies, huge headers, HEAD) and TCP_NODELAY on served connections."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid

import httpx
import psycopg
import uvicorn
from fastapi.testclient import TestClient

from api.encodable import EncodableJSON, TextFile
from api.server import listening_socket, uvicorn_config
from corpus import migrations
from corpus.accounts import username_key
from corpus.db import ensure_database
from tests.web import CSRF, csrf, live_server, sign_up

PASSWORD = "correct horse battery"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def login(client, username: str, password: str):
    return client.post(
        "/api/auth/login", json={"username": username, "password": password}, headers={CSRF: csrf(client)}
    )


def test_username_key_is_nfkc_casefold_without_invisible_characters() -> None:
    assert username_key("Alice") == username_key("ALICE") == username_key("alice")
    assert username_key("ａｌｉｃｅ") == "alice"  # fullwidth letters: NFKC
    assert username_key("ali\u200bce\n") == "alice"  # zero-width space, final newline
    assert username_key("alİce") != "alice"  # Python's fold keeps the dot; PostgreSQL's lower() did not


def test_a_locked_account_stays_locked_under_every_spelling(make_app) -> None:
    app = make_app(failed_logins_per_account_hour=3, failed_logins_per_minute=1000)
    user = unique("alice")
    client = TestClient(app)
    sign_up(client, user, PASSWORD)
    client.cookies.clear()  # a stranger's browser: the account's own limit applies
    assert [login(client, user, f"guess {i}").status_code for i in range(3)] == [401, 401, 401]
    assert login(client, user, PASSWORD).status_code == 429
    for spelling in (user.upper(), user.replace("i", "\u0130"), user.replace("a", "ａ"), user + "\u200b"):
        res = login(client, spelling, PASSWORD)
        assert res.status_code in (401, 429), (spelling, res.status_code)  # never signed in


def test_lockouts_survive_a_restart(make_app) -> None:
    user = unique("carol")
    first = TestClient(make_app(failed_logins_per_account_hour=3, failed_logins_per_minute=1000))
    sign_up(first, user, PASSWORD)
    first.cookies.clear()
    assert [login(first, user, "wrong guess").status_code for _ in range(3)] == [401, 401, 401]
    restarted = TestClient(make_app(failed_logins_per_account_hour=3, failed_logins_per_minute=1000))
    assert login(restarted, user, PASSWORD).status_code == 429  # the new process's memory is empty
    other = unique("dave")  # another account is not affected
    sign_up(restarted, other, PASSWORD)
    restarted.cookies.clear()
    assert login(restarted, other, PASSWORD).status_code == 200


def test_look_alike_names_and_invisible_characters_are_refused(make_app) -> None:
    client = TestClient(make_app())
    base = unique("bob")
    sign_up(client, base, PASSWORD)
    fresh = TestClient(client.app)
    for name in (base + "\n", base.upper(), "bo\u202eb" + base[3:], base + "\u200b"):
        res = fresh.post(
            "/api/auth/register", json={"username": name, "password": PASSWORD}, headers={CSRF: csrf(fresh)}
        )
        assert res.status_code in (409, 422), (name, res.status_code)
    token = sign_up(fresh, unique("eve"))
    made = fresh.post("/api/chats", json={"title": "report\u202egpj.exe \u200bdraft"}, headers={CSRF: token})
    assert made.status_code == 201 and made.json()["title"] == "reportgpj.exe draft"


def test_migration_reports_look_alike_accounts_without_merging(pg_admin_url: str, caplog) -> None:
    """Accounts made before migration 011 that differ only by case folding or a final newline:
    the oldest keeps its name, the others are reported and cannot sign in by name."""
    dbname = f"lookalike_{uuid.uuid4().hex[:8]}"
    ensure_database(pg_admin_url, dbname)
    url = psycopg.conninfo.make_conninfo(pg_admin_url, dbname=dbname)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version, name, body in migrations.available():
            if version < 11:
                conn.execute(body)
                conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (version, name))
        for name in ("frank", "frank\n", "frank\u200b"):
            conn.execute("INSERT INTO users (username, password_hash) VALUES (%s, 'x')", (name,))
            time.sleep(0.01)  # distinct creation times: "oldest" is well defined
        with caplog.at_level(logging.WARNING, logger="chatpapers.db"):
            assert 11 in migrations.migrate(conn)
        keys = conn.execute("SELECT username, username_key FROM users ORDER BY created_at").fetchall()
    assert keys == [("frank", "frank"), ("frank\n", None), ("frank\u200b", None)]
    reported = [r.getMessage() for r in caplog.records if "same name as an older account" in r.getMessage()]
    assert len(reported) == 2 and "'frank\n'" in "".join(reported)


def test_unencodable_text_in_transcripts_is_422_and_responses_always_encode(make_app, corpus_copy) -> None:
    client = TestClient(make_app())
    token = sign_up(client, unique("tess"))
    with corpus_copy.connect() as conn:
        paper_id = conn.execute("SELECT paper_id FROM papers LIMIT 1").fetchone()[0]
    good = {"asker": "you", "question": "Why?", "answer": "Because.", "passages": [], "unsupported": []}
    where = {
        "unsupported": {**good, "unsupported": ["\ud800"]},
        "passage text": {**good, "passages": [{"n": 1, "chunk_id": "c1", "text": "x\ud800"}]},
        "chunk id": {**good, "passages": [{"n": 1, "chunk_id": "\udfff", "text": "x"}]},
        "answer": {**good, "answer": "a\x00b"},
    }
    for label, exchange in where.items():
        body = json.dumps({"exchanges": [exchange]}).encode()  # ASCII escapes: "\ud800" as sent
        res = client.post(
            f"/api/papers/{paper_id}/interview/transcript.md",
            content=body,
            headers={CSRF: token, "Content-Type": "application/json"},
        )
        assert res.status_code == 422, (label, res.status_code, res.text[:200])
    fine = client.post(
        f"/api/papers/{paper_id}/interview/transcript.md", json={"exchanges": [good]}, headers={CSRF: token}
    )
    assert fine.status_code == 200 and "Because." in fine.text
    # the net under every response: what cannot be encoded becomes U+FFFD instead of a 500
    assert TextFile("a\ud800b").body.decode() == "a\ufffdb"
    assert json.loads(EncodableJSON({"t": ["\udfff"]}).body) == {"t": ["\ufffd"]}


def test_http_edges(make_app) -> None:
    app = make_app(max_message_chars=100, body_seconds=1.0)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        token = sign_up(client, unique("hank"))

        def chunks(total: int):
            for _ in range(total // 1000):
                yield b"x" * 1000

        chunked = client.post("/api/chats", content=chunks(20_000), headers={CSRF: token})
        assert chunked.status_code == 413, chunked.text
        for path in ("/api/auth/session", "/docs", "/health", "/api/chats", "/"):
            head = client.head(path)
            assert head.status_code == client.get(path).status_code != 405, path
            assert head.content == b"" and "content-security-policy" in head.headers, path
        huge = client.get("/api/auth/session", headers={"X-Filler": "a" * 40_000})
        assert huge.status_code == 431 and "content-security-policy" in huge.headers

        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(
                b"POST /api/chats HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 50\r\n\r\n{"
            )
            started = time.perf_counter()
            reply = raw.recv(4096)
            held = time.perf_counter() - started
        assert reply.startswith(b"HTTP/1.1 408"), reply[:100]
        assert held < 10, held  # not held open as long as the client likes

        with socket.create_connection((host, int(port)), timeout=10) as raw:  # not HTTP at all
            raw.sendall(b"\x16\x03\x01 not http\r\n\r\n")
            unparsed = raw.recv(4096)
        assert unparsed.startswith(b"HTTP/1.1 400"), unparsed[:100]
        assert b"content-security-policy: default-src 'self'" in unparsed.lower()
        assert b"x-content-type-options: nosniff" in unparsed.lower()


def test_served_connections_have_tcp_nodelay(make_app) -> None:
    """The listening socket says IPPROTO_TCP, so asyncio sets TCP_NODELAY on every accepted
    connection (without it, a reused connection waits ~40 ms for delayed ACKs per response)."""
    app = make_app()
    server = uvicorn.Server(uvicorn_config(app, app.state.chatpapers.settings, "127.0.0.1", 0))
    listener = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        port = listener.getsockname()[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            assert client.get("/api/auth/session").status_code == 200
            sockets = [c.transport.get_extra_info("socket") for c in server.server_state.connections]
            assert sockets and all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in sockets), (
                "TCP_NODELAY is off"
            )
    finally:
        server.should_exit = True
        thread.join(timeout=30)
