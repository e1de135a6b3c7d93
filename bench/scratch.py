"""A scratch embedded PostgreSQL for one benchmark run (a fresh data dir under /tmp)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from psycopg.conninfo import make_conninfo

from chatpapers.settings import Settings
from corpus.db import ensure_database
from corpus.embedded import start_embedded


def scratch_settings(prefix: str, dbname: str = "bench") -> tuple[Settings, str]:
    """Settings pointing at a new database on a new embedded server, and the server's admin URL."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    admin = start_embedded(work / "pg")
    ensure_database(admin, dbname)
    return Settings(_env_file=None, database_url=make_conninfo(admin, dbname=dbname), data_dir=work), admin
