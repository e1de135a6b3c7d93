"""What a person sees from the command line: help, usage errors, unreachable database, status."""

from __future__ import annotations

import json
import os
import subprocess

from corpus.db import Database
from tests.conftest import chatpapers_exe


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CHATPAPERS_") and k != "DATABASE_URL"}
    return subprocess.run(
        [chatpapers_exe(), *args], env={**base, **env}, capture_output=True, text=True, timeout=120
    )


def test_help_explains_the_commands() -> None:
    done = _run("ingest", "--help")
    assert done.returncode == 0
    for words in (
        "--category",
        "--pdf-dir",
        "--max-results",
        "--since",
        "watermark",
        "chatpapers ingest -c cs.CL",
    ):
        assert words in done.stdout


def test_usage_errors_have_no_traceback() -> None:
    done = _run("ingest")
    assert done.returncode == 2 and "say what to ingest" in done.stderr
    done = _run("ingest", "-c", "not a category")
    assert done.returncode == 1 and "not an arXiv category" in done.stderr
    done = _run("ingest", "--pdf-dir", "/nonexistent/folder")
    assert done.returncode == 1 and "PDF folder not found" in done.stderr
    assert all("Traceback" not in d.stderr for d in [done])


def test_unreachable_database_is_a_clear_error(tmp_path) -> None:
    done = _run(
        "db",
        "status",
        "--json",
        DATABASE_URL="postgresql://chatpapers@127.0.0.1:1/chatpapers",
        CHATPAPERS_DATA_DIR=str(tmp_path),
    )
    assert done.returncode == 1
    assert "cannot connect to the database (127.0.0.1:1/chatpapers)" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_status_json(ingested: Database) -> None:
    done = _run("db", "status", "--json", DATABASE_URL=ingested.settings.database_url or "")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["papers"] == 7 and status["chunks"] > 100 and status["failed"] == 0
    assert status["schema_version"] >= 2 and status["db_size_bytes"] > 0


def test_serve_on_a_busy_port_says_so(tmp_path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = _run("serve", "--port", str(port), CHATPAPERS_DATA_DIR=str(tmp_path))
    assert res.returncode == 1 and "cannot listen" in res.stderr and "Traceback" not in res.stderr
