"""Sign-in and registration limits against a live server (uvicorn configured as `serve` does):
forwarded headers only from trusted proxies, an atomic check-and-count, the owner's own browser
not locked out by somebody else's guessing, closed registration and the `users` command."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
from fastapi.testclient import TestClient

from tests.conftest import cli_env, run_cli
from tests.web import CSRF, csrf, live_server, sign_up

PASSWORD = "correct horse battery"


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def login(client: httpx.Client, username: str, password: str, **headers: str) -> httpx.Response:
    return client.post(
        "/api/auth/login",
        json={"username": username, "password": password},
        headers={CSRF: csrf(client), **headers},
    )


def test_forwarded_for_counts_only_from_a_trusted_proxy(make_app) -> None:
    app = make_app(failed_logins_per_minute=3)
    user = name("victim")
    sign_up(TestClient(app), user, PASSWORD)
    with live_server(app) as url, httpx.Client(base_url=url) as client:
        codes = [login(client, user, f"guess {i}", **{"X-Forwarded-For": f"10.0.0.{i}"}) for i in range(5)]
        assert [r.status_code for r in codes] == [401, 401, 401, 429, 429]
        assert int(codes[-1].headers["Retry-After"]) >= 1
        plain = client.post(
            "/api/auth/register",
            json={"username": name("u"), "password": PASSWORD},
            headers={CSRF: csrf(client), "X-Forwarded-Proto": "https"},
        )
        assert "secure" not in plain.headers["set-cookie"].lower()  # the header is not believed
    other = make_app(failed_logins_per_minute=3)
    with live_server(other, trusted_proxies="127.0.0.1") as url, httpx.Client(base_url=url) as client:
        first = [
            login(client, user, "guess", **{"X-Forwarded-For": "10.0.0.1"}).status_code for _ in range(4)
        ]
        assert first == [401, 401, 401, 429]
        # another address behind the same proxy has its own count
        assert login(client, user, "guess", **{"X-Forwarded-For": "10.0.0.2"}).status_code == 401
        behind_tls = client.post(
            "/api/auth/register",
            json={"username": name("u"), "password": PASSWORD},
            headers={CSRF: csrf(client), "X-Forwarded-Proto": "https"},
        )
        cookies = behind_tls.headers.get_list("set-cookie")
        session = next(c for c in cookies if c.startswith("chatpapers_session="))
        assert behind_tls.status_code == 201 and "Secure" in session


def test_concurrent_guesses_are_counted_before_they_are_checked(make_app) -> None:
    app = make_app(failed_logins_per_minute=10)
    user = name("target")
    sign_up(TestClient(app), user, PASSWORD)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        token = csrf(client)

        def guess(i: int) -> int:
            return client.post(
                "/api/auth/login", json={"username": user, "password": f"guess {i}"}, headers={CSRF: token}
            ).status_code

        with ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(guess, range(60)))
    assert codes.count(401) == 10 and codes.count(429) == 50


def test_the_owners_browser_is_not_locked_out_by_guessers(make_app) -> None:
    app = make_app(failed_logins_per_minute=100, failed_logins_per_account_hour=5)
    user = name("owner")
    owner = TestClient(app)
    sign_up(owner, user, PASSWORD)  # this browser now holds a device cookie for the account
    assert "chatpapers_device" in owner.cookies
    attacker = TestClient(app)
    assert [login(attacker, user, f"guess {i}").status_code for i in range(6)] == [401] * 5 + [429]
    assert login(attacker, user, PASSWORD).status_code == 429  # a new browser waits out the limit
    assert login(owner, user, PASSWORD).status_code == 200  # the owner's browser is exempt
    # the device cookie names one account: it does not exempt guesses at another
    other = name("other")
    sign_up(TestClient(app), other, PASSWORD)
    assert [login(owner, other, "guess").status_code for _ in range(6)][-1] == 429
    # a forged device cookie is an ordinary browser
    forged = TestClient(app)
    forged.cookies.set(
        "chatpapers_device", owner.cookies["chatpapers_device"][:-4] + "AAAA", path="/api/auth"
    )
    assert login(forged, user, PASSWORD).status_code == 429


def test_a_right_password_does_not_use_up_the_limit(make_app) -> None:
    client = TestClient(make_app(failed_logins_per_minute=2))
    user = name("often")
    sign_up(client, user, PASSWORD)
    fresh = TestClient(client.app)
    assert all(login(fresh, user, PASSWORD).status_code == 200 for _ in range(5))


def test_registration_limits_weak_passwords_and_closing(make_app, corpus_copy) -> None:
    client = TestClient(make_app(registrations_per_hour=2))
    token = csrf(client)

    def register(username: str, password: str = PASSWORD) -> httpx.Response:
        return client.post(
            "/api/auth/register", json={"username": username, "password": password}, headers={CSRF: token}
        )

    for weak in ("12345678", "password1", "qwertyuiop"):
        res = register(name("w"), weak)
        assert res.status_code == 422 and "too weak" in res.json()["detail"], res.text
    assert register(name("a")).status_code == 201
    token = csrf(client)
    assert register(name("b")).status_code == 201
    token = csrf(client)
    third = register(name("c"))
    assert third.status_code == 429 and int(third.headers["Retry-After"]) > 60

    closed = TestClient(make_app(registration="closed"))
    refused = closed.post(
        "/api/auth/register", json={"username": name("d"), "password": PASSWORD}, headers={CSRF: csrf(closed)}
    )
    assert refused.status_code == 403 and "registration is closed" in refused.json()["detail"]

    # the administrator creates the account from the terminal instead
    env = cli_env(corpus_copy.settings, DATABASE_URL=corpus_copy.url)
    username = name("admin-made")
    weak = run_cli(env, "users", "add", username, "--password-stdin", input="12345678\n")
    assert weak.returncode == 2 and "too weak" in weak.stderr and "Traceback" not in weak.stderr
    made = run_cli(env, "users", "add", username, "--password-stdin", input=PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    assert run_cli(env, "users", "add", username, "--password-stdin", input=PASSWORD + "\n").returncode == 1
    assert login(closed, username, PASSWORD).status_code == 200
    assert username in run_cli(env, "users", "list").stdout
    new = "another fine passphrase"
    changed = run_cli(env, "users", "set-password", username, "--password-stdin", input=new + "\n")
    assert changed.returncode == 0, changed.stderr
    assert closed.get("/api/chats").status_code == 401  # signed out everywhere
    assert login(closed, username, new).status_code == 200
    chat = closed.post("/api/chats", json={}, headers={CSRF: csrf(closed)})
    assert chat.status_code == 201
    gone = run_cli(env, "users", "delete", username, "--yes")
    assert gone.returncode == 0 and "1 chat" in gone.stdout, gone.stdout + gone.stderr
    assert login(closed, username, new).status_code == 401
    with corpus_copy.connect() as conn:
        assert (
            conn.execute(
                "SELECT count(*) FROM chats WHERE chat_id = %s", (chat.json()["chat_id"],)
            ).fetchone()[0]
            == 0
        )
