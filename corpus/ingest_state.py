"""SQL for the ingest-state table family: per-paper status and per-category watermarks."""

from __future__ import annotations

from datetime import datetime

import psycopg
from pydantic import BaseModel


class ItemState(BaseModel):
    paper_id: str
    version: int | None
    source_sha256: str | None
    status: str
    reason: str | None
    retryable: bool
    text_version: int | None = None  # the extraction that made its text; None: before versions


def get_item(conn: psycopg.Connection, paper_id: str) -> ItemState | None:
    row = conn.execute(
        "SELECT paper_id, version, source_sha256, status, reason, retryable, text_version"
        " FROM ingest_items WHERE paper_id = %s",
        (paper_id,),
    ).fetchone()
    if row is None:
        return None
    return _state(row)


def get_items(conn: psycopg.Connection, paper_ids: list[str]) -> dict[str, ItemState]:
    """The states of these papers (those that have one), in one query."""
    rows = conn.execute(
        "SELECT paper_id, version, source_sha256, status, reason, retryable, text_version"
        " FROM ingest_items WHERE paper_id = ANY(%s)",
        (paper_ids,),
    ).fetchall()
    return {r[0]: _state(r) for r in rows}


def _state(row: tuple) -> ItemState:
    return ItemState(
        paper_id=row[0], version=row[1], source_sha256=row[2], status=row[3], reason=row[4],
        retryable=row[5], text_version=row[6],
    )  # fmt: skip


def handled_file(conn: psycopg.Connection, sha256: str, text_version: int) -> bool:
    """A file with these bytes was handled before, for good (stored or empty by an extraction of
    `text_version` or later, or broken)."""
    row = conn.execute(
        "SELECT 1 FROM ingest_items WHERE source_sha256 = %s AND NOT retryable"
        " AND (status = 'failed' OR coalesce(text_version, 0) >= %s)",
        (sha256, text_version),
    ).fetchone()
    return row is not None


def record_item(
    conn: psycopg.Connection,
    *,
    paper_id: str,
    version: int | None,
    source: str,
    location: str | None,
    source_sha256: str | None,
    status: str,
    reason: str | None = None,
    retryable: bool = False,
    n_chunks: int = 0,
    text_version: int | None = None,
) -> None:
    conn.execute(
        """
        INSERT INTO ingest_items
            (paper_id, version, source, location, source_sha256, status, reason, retryable, n_chunks,
             text_version)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
        ON CONFLICT (paper_id) DO UPDATE SET
            version = EXCLUDED.version, source = EXCLUDED.source, location = EXCLUDED.location,
            source_sha256 = EXCLUDED.source_sha256, status = EXCLUDED.status, reason = EXCLUDED.reason,
            retryable = EXCLUDED.retryable, n_chunks = EXCLUDED.n_chunks,
            text_version = EXCLUDED.text_version,
            attempts = ingest_items.attempts + 1, updated_at = now()
        """,
        (
            paper_id,
            version,
            source,
            location,
            source_sha256,
            status,
            reason,
            retryable,
            n_chunks,
            text_version,
        ),
    )


# stored papers whose text an extraction older than the one asked for made (NULL: before versions)
_OLDER_TEXT = (
    " FROM ingest_items i JOIN papers p USING (paper_id)"
    " WHERE i.status IN ('ok', 'empty') AND coalesce(i.text_version, 0) < %s"
)


def count_older_text(conn: psycopg.Connection, current: int) -> int:
    row = conn.execute(f"SELECT count(*){_OLDER_TEXT}", (current,)).fetchone()
    return int(row[0]) if row else 0


class OlderText(BaseModel):
    paper_id: str
    version: int | None
    source: str
    location: str | None
    source_sha256: str | None
    described_from_pdf: bool  # its title, authors and abstract too were read from the PDF


def older_text(conn: psycopg.Connection, current: int) -> list[OlderText]:
    """Stored papers whose text an extraction older than `current` made (or one before versions
    were recorded), oldest handled first."""
    rows = conn.execute(
        "SELECT i.paper_id, i.version, i.source, i.location, i.source_sha256, p.described_from_pdf"
        f"{_OLDER_TEXT} ORDER BY i.updated_at, i.paper_id",
        (current,),
    ).fetchall()
    return [
        OlderText(
            paper_id=r[0],
            version=r[1],
            source=r[2],
            location=r[3],
            source_sha256=r[4],
            described_from_pdf=r[5],
        )
        for r in rows
    ]


def get_watermark(conn: psycopg.Connection, category: str) -> datetime | None:
    row = conn.execute(
        "SELECT last_updated FROM ingest_watermarks WHERE category = %s", (category,)
    ).fetchone()
    return row[0] if row else None


def set_watermark(conn: psycopg.Connection, category: str, last_updated: datetime) -> None:
    conn.execute(
        """
        INSERT INTO ingest_watermarks (category, last_updated) VALUES (%s, %s)
        ON CONFLICT (category) DO UPDATE SET
            last_updated = GREATEST(ingest_watermarks.last_updated, EXCLUDED.last_updated),
            last_run_at = now()
        """,
        (category, last_updated),
    )


def status_summary(conn: psycopg.Connection) -> dict:
    by_status = dict(conn.execute("SELECT status, count(*) FROM ingest_items GROUP BY status").fetchall())
    watermarks = {
        cat: ts.isoformat()
        for cat, ts in conn.execute(
            "SELECT category, last_updated FROM ingest_watermarks ORDER BY category"
        ).fetchall()
    }
    failures = [
        {"paper_id": r[0], "reason": r[1], "retryable": r[2]}
        for r in conn.execute(
            "SELECT paper_id, reason, retryable FROM ingest_items WHERE status = 'failed'"
            " ORDER BY updated_at DESC LIMIT 20"
        ).fetchall()
    ]
    return {
        "failed": int(by_status.get("failed", 0)),
        "empty": int(by_status.get("empty", 0)),
        "watermarks": watermarks,
        "recent_failures": failures,
    }
