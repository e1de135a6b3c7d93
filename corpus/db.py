"""Connections to the corpus database: DATABASE_URL when set, else the embedded server."""

from __future__ import annotations

import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from ground.settings import Settings

if TYPE_CHECKING:
    from corpus.embedded import Supervisor

APP_DATABASE = "chatpapers"
log = logging.getLogger("chatpapers.db")
# The pool logs every failed reconnection attempt (several a second during an outage); the
# breaker below says once that the database went away and once that it is back.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


# Time bounds of request connections (pooled). A frozen server (SIGSTOP, a stalled disk, a paused
# VM) keeps its sockets open and the kernel keeps accepting, so no timeout of the server's own and
# no TCP timeout ends a query: a watchdog does. A query still running after FROZEN_CHECK_SECONDS
# has the server pinged (PING_SECONDS); a server that does not answer is frozen, the query's socket
# is shut, the request gets its 503 and the breaker opens. A slow query on a live server only
# meets statement_timeout.
FROZEN_CHECK_SECONDS = 0.5
PING_SECONDS = 0.3  # a live server answers in well under a millisecond locally, a few over a network
REQUEST_OPTIONS = (
    "-c statement_timeout=30000 -c lock_timeout=5000 -c idle_in_transaction_session_timeout=60000"
)
TCP_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
_SSL_REQUEST = struct.pack("!ii", 8, 80877103)


def server_answers(url: str, timeout: float = PING_SECONDS) -> bool:
    """Whether the PostgreSQL server of `url` answers at all within `timeout`: an SSLRequest, to
    which any live server replies with one byte before authentication. libpq's connect_timeout
    cannot do this: it counts in whole seconds, two at least."""
    info = conninfo_to_dict(url)
    host = (info.get("host") or "/tmp").split(",")[0]
    port = int(str(info.get("port") or 5432).split(",")[0])
    try:
        if host.startswith("/"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(f"{host}/.s.PGSQL.{port}")
        else:
            sock = socket.create_connection((info.get("hostaddr") or host, port), timeout=timeout)
        with sock:
            sock.settimeout(timeout)
            sock.sendall(_SSL_REQUEST)
            return sock.recv(1) in (b"S", b"N")
    except OSError:
        return False


class DatabaseUnavailable(RuntimeError):
    """The database cannot be reached; the message says where and why, for people."""


class _ServerDown(BaseException):
    """Raised by the pool's connection check when the server itself is gone. A BaseException on
    purpose: psycopg_pool retries a failed check (sleeping) until its timeout, but passes these
    through at once, and a request should not wait seconds to learn the database is down."""


class Database:
    """Resolves the database URL once (starting the embedded server if needed) and hands out
    connections with pgvector types registered. Migrations run on first use.

    Pooled connections go through a circuit breaker: once the server is found unreachable, every
    request fails at once (DatabaseUnavailable) instead of waiting for the pool's timeout, and one
    probe per `PROBE_SECONDS` decides when it is back; connections broken by the outage are
    dropped then, so the service recovers without a restart."""

    PROBE_SECONDS = 1.0
    POOL_WAIT_SECONDS = 5.0  # a busy pool (not a dead server) makes a request wait this long at most
    POOL_WAIT_SLICE_SECONDS = 0.25

    def __init__(self, settings: Settings, dbname: str | None = None, migrate: bool = True) -> None:
        self.settings = settings
        self._dbname = dbname
        self._migrate = migrate
        self._url: str | None = None
        self._lock = threading.Lock()
        self._pool = None
        self.pool_size = 8
        self._probe_lock = threading.Lock()
        self._down: str | None = None  # why the breaker is open; None while closed
        self._last_probe = 0.0
        self._ping_lock = threading.Lock()
        self._pinged_at = -1e9  # when _server_gone last pinged, and what it found
        self._answered = True

    @property
    def url(self) -> str:
        with self._lock:
            if self._url is None:
                url = self._resolve_url()
                if self._migrate:
                    from corpus.migrations import migrate

                    with self._raw_connect(autocommit=True, url=url) as conn:
                        migrate(conn)
                self._url = url  # only once migrated: a failed start is tried again next time
            return self._url

    def _resolve_url(self) -> str:
        if self.settings.database_url:
            url = self.settings.database_url
            if self._dbname:
                url = make_conninfo(url, dbname=self._dbname)
            return url
        from corpus.embedded import EmbeddedServerError, start_embedded
        from corpus.server_sizing import sized_for

        sizing = sized_for(self.settings.pg_ram_mb, overrides=self.settings.pg_settings)
        try:
            admin_url = start_embedded(self.settings.pg_data_dir, sizing)
        except EmbeddedServerError as exc:
            raise DatabaseUnavailable(str(exc)) from exc
        dbname = self._dbname or APP_DATABASE
        ensure_database(admin_url, dbname)
        return make_conninfo(admin_url, dbname=dbname)

    def _raw_connect(
        self, autocommit: bool = False, url: str | None = None, timeout: int = 10
    ) -> psycopg.Connection:
        url = url or self._url
        assert url is not None
        try:
            return psycopg.connect(url, autocommit=autocommit, connect_timeout=timeout)
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(
                f"cannot connect to the database ({self.settings.describe_database()}): "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc}"
            ) from exc

    def connect(self, autocommit: bool = False) -> psycopg.Connection:
        _ = self.url
        conn = self._raw_connect(autocommit=autocommit)
        self._configure(conn)
        return conn

    def _configure(self, conn: psycopg.Connection) -> None:
        """Every connection, pooled or not: pgvector types and the HNSW search breadth."""
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {int(self.settings.hnsw_ef_search)}")
        if not conn.autocommit:
            conn.commit()  # a session SET lasts once committed; pools want idle connections

    # ---- the circuit breaker ------------------------------------------------------------------
    def _trip(self, reason: str) -> None:
        if self._down is None:
            log.warning("the database is unavailable: %s", reason)
        self._down = reason
        self._last_probe = time.monotonic()

    def _probe(self) -> str | None:
        """Why the server cannot be reached now, or None if it can."""
        if self._url is not None and not server_answers(self._url):
            return "the database server does not answer"
        try:
            with self._raw_connect(autocommit=True, timeout=2) as conn:
                conn.execute("SELECT 1")
        except (DatabaseUnavailable, psycopg.Error) as exc:
            return str(exc)
        return None

    def _found_down(self) -> str | None:
        """Why the server cannot be reached now, the breaker opened for it; None if it can."""
        reason = self._probe()
        if reason is not None:
            self._trip(reason)
        return reason

    def _admit(self) -> None:
        """Fail at once while the breaker is open; at most one caller per PROBE_SECONDS probes."""
        if self._down is None:
            return
        if time.monotonic() - self._last_probe < self.PROBE_SECONDS or not self._probe_lock.acquire(
            blocking=False
        ):
            raise DatabaseUnavailable(self._down)
        try:
            self._last_probe = time.monotonic()
            reason = self._probe() if self._url is not None else None
            if reason is not None:
                self._trip(reason)
                raise DatabaseUnavailable(reason)
            self._down = None
            log.warning("the database is back")
            if self._pool is not None:
                self._pool.check()  # drop the connections the outage broke
        finally:
            self._probe_lock.release()

    def _check_pooled(self, conn: psycopg.Connection) -> None:
        """The pool's check of a connection before handing it out (see _ServerDown)."""
        watch = self._watched(conn)
        try:
            with watch:
                ConnectionPool.check_connection(conn)
        except Exception:
            if watch.fired:  # the watchdog found the server frozen: no second ping
                raise _ServerDown(self._down or "the database server does not answer") from None
            reason = self._found_down()
            if reason is not None:
                raise _ServerDown(reason) from None
            raise  # only this connection was broken: the pool drops it and hands out another

    def pooled(self) -> AbstractContextManager[psycopg.Connection]:
        """A connection from a small pool (pgvector types registered once per connection): for
        hot paths such as agent tools and API requests. Commits on success, rolls back on error.
        DatabaseUnavailable at once while the server is unreachable."""
        self._admit()
        try:
            url = self.url  # resolves (and migrates) first, under its own lock
        except DatabaseUnavailable as exc:
            self._trip(str(exc))
            raise
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    url,
                    min_size=1,
                    max_size=self.pool_size,
                    configure=self._configure,
                    check=self._check_pooled,
                    timeout=self.POOL_WAIT_SECONDS,
                    open=True,
                    kwargs={"connect_timeout": 10, "options": REQUEST_OPTIONS, **TCP_KEEPALIVES},
                    name="chatpapers",
                )
            pool = self._pool
        return self._checked_out(pool)

    def _getconn(self, pool: ConnectionPool) -> psycopg.Connection:
        """A connection within POOL_WAIT_SECONDS, waited for in slices: a server that dies while
        every connection is in use leaves the pool none to check, only reconnections that fail
        in its background, so one long wait would hold the request for all of it (5 s measured).
        Between slices the breaker and a ping (_server_gone) say whether to stop waiting. Each
        slice queues the request again, so under a long overload a request that has waited
        longer is not always served first; a dead server's 503 at once is worth that."""
        deadline = time.monotonic() + self.POOL_WAIT_SECONDS
        while True:
            try:
                return pool.getconn(
                    timeout=min(self.POOL_WAIT_SLICE_SECONDS, max(deadline - time.monotonic(), 0.01))
                )
            except _ServerDown as down:
                raise DatabaseUnavailable(str(down)) from None
            except PoolTimeout as exc:
                if self._down is not None:
                    raise DatabaseUnavailable(self._down) from None
                if self._server_gone():
                    self._trip("the database server does not answer")
                    raise DatabaseUnavailable("the database server does not answer") from None
                if time.monotonic() >= deadline:
                    reason = self._found_down()
                    if reason is not None:
                        raise DatabaseUnavailable(reason) from None
                    raise DatabaseUnavailable(
                        f"the database is busy: no connection free after {self.POOL_WAIT_SECONDS:g} s"
                    ) from exc

    def _server_gone(self) -> bool:
        """Whether a ping finds the server gone: one ping a slice for all the requests waiting,
        so a busy pool on a live server is not pinged four times a second per waiting request
        (each ping starts a server process)."""
        if self._url is None:
            return False
        with self._ping_lock:
            if time.monotonic() - self._pinged_at >= self.POOL_WAIT_SLICE_SECONDS:
                self._answered = server_answers(self._url)
                self._pinged_at = time.monotonic()
            return not self._answered

    @contextmanager
    def _checked_out(self, pool: ConnectionPool) -> Iterator[psycopg.Connection]:
        conn = self._getconn(pool)
        watch = self._watched(conn)
        try:
            with watch, conn:  # a pooled connection: commits or rolls back, stays open
                yield conn
        except psycopg.OperationalError as exc:
            if watch.fired:
                raise DatabaseUnavailable(self._down or "the database server does not answer") from exc
            if conn.broken:
                # the server may have died under the query: open the breaker now, so the requests
                # behind this one fail at once rather than wait for a connection that cannot come
                reason = self._found_down()
                if reason is not None:
                    raise DatabaseUnavailable(reason) from exc
            raise
        finally:
            pool.putconn(conn)

    def _watched(self, conn: psycopg.Connection) -> _Watchdog:
        return _Watchdog(conn, self)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def describe(self) -> str:
        return self.settings.describe_database()

    def supervise(self) -> Supervisor | None:
        """For a long-running server (`serve`): the embedded PostgreSQL, if that is what this
        database is, started again whenever it dies. Returns the running Supervisor, or None with
        DATABASE_URL (a server of one's own has its own supervisor: systemd, docker, the cloud)."""
        if self.settings.database_url:
            return None
        from corpus.embedded import Supervisor
        from corpus.server_sizing import sized_for

        _ = self.url
        sizing = sized_for(self.settings.pg_ram_mb, overrides=self.settings.pg_settings)
        return Supervisor(self.settings.pg_data_dir, sizing).start()


class _Watchdog:
    """While its block runs: after FROZEN_CHECK_SECONDS, ping the server; if it does not answer,
    open the breaker and shut the connection's socket, which ends whatever libpq waits for."""

    def __init__(self, conn: psycopg.Connection, db: Database) -> None:
        self.conn, self.db = conn, db
        self.fired = False
        self.active = False
        self.lock = threading.Lock()  # held while firing: the block cannot end half-way through

    def __enter__(self) -> _Watchdog:
        self.active = True
        _MONITOR.watch(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _MONITOR.forget(self)
        with self.lock:
            self.active = False

    def fire(self) -> None:
        with self.lock:
            if not self.active:
                return  # its block ended while the server was being pinged
            self.fired = True
            self.db._trip("the database server does not answer (frozen or overloaded)")
            try:
                fd = self.conn.pgconn.socket
                with socket.socket(fileno=os.dup(fd)) as sock:
                    sock.shutdown(socket.SHUT_RDWR)
            except (OSError, psycopg.Error):
                pass  # already closed


class _WatchdogMonitor:
    """One thread for every watchdog of the process (a timer thread per checkout cost a thread
    start on every request): it sleeps until the earliest block is due, pings each server that
    has a due block once, and fires the due blocks of a server that does not answer."""

    def __init__(self) -> None:
        self._due: dict[int, tuple[float, _Watchdog]] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, watchdog: _Watchdog) -> None:
        with self._cond:
            self._due[id(watchdog)] = (time.monotonic() + FROZEN_CHECK_SECONDS, watchdog)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="db-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()

    def forget(self, watchdog: _Watchdog) -> None:
        with self._cond:
            self._due.pop(id(watchdog), None)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [w for at, w in self._due.values() if at <= now]
                if not due:
                    nearest = min((at for at, _ in self._due.values()), default=None)
                    self._cond.wait(None if nearest is None else nearest - now)
                    continue
                for w in due:
                    del self._due[id(w)]
            by_url: dict[str, list[_Watchdog]] = {}
            for w in due:
                if w.db._url is not None:
                    by_url.setdefault(w.db._url, []).append(w)
            for url, group in by_url.items():
                if not server_answers(url):  # a slow query on a live server: statement_timeout bounds it
                    for w in group:
                        w.fire()


_MONITOR = _WatchdogMonitor()


def ensure_database(admin_url: str, dbname: str, template: str | None = None) -> None:
    """CREATE DATABASE unless it exists (safe when two processes race)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if exists:
            return
        stmt = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname))
        if template:
            stmt += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        try:
            conn.execute(stmt)
        except psycopg.errors.DuplicateDatabase:
            pass
        except psycopg.errors.UniqueViolation:
            pass


def dbname_of(url: str) -> str:
    return conninfo_to_dict(url).get("dbname", "")


def drop_database(admin_url: str, dbname: str) -> None:
    """DROP DATABASE if it exists (scratch databases of benchmarks)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(dbname)))
