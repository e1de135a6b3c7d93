"""A scratch embedded PostgreSQL for one benchmark run (a fresh data dir under /tmp)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from psycopg.conninfo import make_conninfo

from chatpapers.services import Services
from corpus.db import ensure_database
from corpus.embedded import start_embedded


def scratch_services(prefix: str, dbname: str = "bench", **overrides: object) -> tuple[Services, str]:
    """Services over a new database on a new embedded server (no .env read), and the server's
    admin URL."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    admin = start_embedded(work / "pg")
    ensure_database(admin, dbname)
    url = make_conninfo(admin, dbname=dbname)
    return Services.from_environment(env_file=None, database_url=url, data_dir=work, **overrides), admin
