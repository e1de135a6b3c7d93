"""Explicit, ordered, idempotent schema migrations (`corpus/schema/NNN_name.sql`).

Each file runs once, in its own transaction, recorded in `schema_migrations`. An advisory lock
serialises concurrent migrators (a `serve` and an `ingest` starting together)."""

from __future__ import annotations

import logging
from importlib import resources

import psycopg

log = logging.getLogger("chatpapers.db")

_LOCK_KEY = 0x636861747061  # 'chatpa'


def available() -> list[tuple[int, str, str]]:
    files = sorted(
        (f for f in resources.files("corpus.schema").iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    out = []
    for f in files:
        number, _, name = f.name.removesuffix(".sql").partition("_")
        out.append((int(number), name, f.read_text(encoding="utf-8")))
    return out


def applied(conn: psycopg.Connection) -> list[int]:
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return []
    return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


def enable_pgvector(conn: psycopg.Connection) -> None:
    """Only the pgvector extension, for databases that are not chatpapers' own (benchmarks)."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def migrate(conn: psycopg.Connection) -> list[int]:
    """Apply pending migrations; returns the versions applied now. `conn` must be in autocommit."""
    done_now: list[int] = []
    if {v for v, _, _ in available()} <= set(applied(conn)):
        return done_now  # up to date: no lock, no DDL (a read-only database or role works too)
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    conn.add_notice_handler(_report)  # a migration's RAISE WARNING (e.g. look-alike accounts, 011)
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        have = set(applied(conn))
        for version, name, body in available():
            if version in have:
                continue
            with conn.transaction():
                conn.execute(body)
                conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
            done_now.append(version)
    finally:
        conn.remove_notice_handler(_report)
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return done_now


def _report(notice: psycopg.errors.Diagnostic) -> None:
    if notice.severity_nonlocalized in ("WARNING", "ERROR"):
        log.warning("database migration: %s", notice.message_primary)
