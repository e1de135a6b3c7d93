"""Helpers for tests of the web app: signing up through the API, reading SSE, a live server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from fastapi import FastAPI

from api.server import listening_socket, uvicorn_config

CSRF = "X-CSRF-Token"


# A page's CSP violations, collected in `window.__csp` (add as an init script before loading it).
COLLECT_CSP_VIOLATIONS = (
    "window.__csp = [];"
    "document.addEventListener('securitypolicyviolation',"
    " (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def csrf(client: httpx.Client) -> str:
    """The CSRF token for the client's current session (or anonymous cookie)."""
    return client.get("/api/auth/session").json()["csrf_token"]


def sign_up(client: httpx.Client, username: str, password: str = "correct horse battery") -> str:
    """Register and sign in; returns the session's CSRF token."""
    res = client.post(
        "/api/auth/register", json={"username": username, "password": password}, headers={CSRF: csrf(client)}
    )
    assert res.status_code == 201, res.text
    return res.json()["csrf_token"]


def sse_events(lines: Iterator[str]) -> list[tuple[str, dict]]:
    """(event type, data) pairs of a Server-Sent Events body."""
    events, kind, data = [], None, []
    for line in lines:
        if line == "":
            if data:
                events.append((kind or "message", json.loads("\n".join(data))))
            kind, data = None, []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    return events


def ask(client: httpx.Client, chat_id: str, token: str, question: str) -> list[tuple[str, dict]]:
    with client.stream(
        "POST", f"/api/chats/{chat_id}/messages", json={"content": question}, headers={CSRF: token}
    ) as res:
        assert res.status_code == 200, res.read()
        assert res.headers["content-type"].startswith("text/event-stream")
        return sse_events(res.iter_lines())


@contextmanager
def live_server(app: FastAPI, trusted_proxies: str | None = None) -> Iterator[str]:
    """Serve `app` with uvicorn on a free loopback port (in a thread), configured as `chatpapers
    serve` configures it; yields its base URL."""
    settings = app.state.chatpapers.settings
    server = uvicorn.Server(uvicorn_config(app, settings, "127.0.0.1", 0, trusted_proxies))
    listener = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
