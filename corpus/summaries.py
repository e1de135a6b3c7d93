"""SQL for the paper-summary cache (one summary per paper version and model)."""

from __future__ import annotations

import psycopg


def get_summary(conn: psycopg.Connection, paper_id: str, version: int | None, model: str) -> str | None:
    row = conn.execute(
        "SELECT summary FROM paper_summaries WHERE paper_id = %s AND version = %s AND model = %s",
        (paper_id, version or 0, model),
    ).fetchone()
    return row[0] if row else None


def put_summary(
    conn: psycopg.Connection, paper_id: str, version: int | None, model: str, summary: str
) -> None:
    conn.execute(
        "INSERT INTO paper_summaries (paper_id, version, model, summary) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (paper_id, version, model)"
        " DO UPDATE SET summary = EXCLUDED.summary, created_at = now()",
        (paper_id, version or 0, model, summary),
    )
