"""kill -9 in the middle of an ingest: nothing half-visible, no duplicates, the rerun finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psycopg

from ground.settings import Settings
from tests.conftest import chatpapers_exe, cli_env, subset_folder

PAPERS = [
    "2304.02623v1.pdf",
    "1609.09430v2.pdf",
    "1212.5701v1.pdf",
    "1608.03417v1.pdf",
    "2212.08410v3.pdf",
    "1503.02531v1.pdf",
]


def _stored(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM papers").fetchone()[0]


def test_kill_9_then_resume(settings: Settings, tmp_path: Path) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", PAPERS)
    cmd = [chatpapers_exe(), "ingest", "--pdf-dir", str(folder), "--metadata", str(meta), "--no-progress"]
    env = cli_env(settings)
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 300
    # Wait (polling the database, not sleeping for a fixed time) until some but not all papers are in.
    while _stored(settings.database_url) < 2:
        assert proc.poll() is None, "ingest ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with psycopg.connect(settings.database_url) as conn:
        partial = conn.execute(
            "SELECT p.paper_id FROM papers p LEFT JOIN chunks c USING (paper_id)"
            " GROUP BY p.paper_id, p.n_chunks HAVING count(c.seq) <> p.n_chunks"
        ).fetchall()
        killed_at = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    assert partial == [] and 2 <= killed_at < len(PAPERS)

    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{killed_at} unchanged" in done.stdout
    with psycopg.connect(settings.database_url) as conn:
        papers = conn.execute("SELECT count(*), sum(n_chunks) FROM papers").fetchone()
        chunks = conn.execute("SELECT count(*), count(DISTINCT (paper_id, seq)) FROM chunks").fetchone()
        items = conn.execute("SELECT count(*) FROM ingest_items WHERE status = 'ok'").fetchone()[0]
    assert papers[0] == len(PAPERS) == items
    assert chunks[0] == chunks[1] == papers[1]
