"""Two other layouts of the chunk vectors, each with the paper's submission date beside every
vector, built by bench/scale.py (--layouts) to measure what issue 14 asked about; the product
uses neither (the figures and the choice are in docs/scaling.md).

- `chunk_dates_flat`: one table and one HNSW index, the date denormalised into the row: a date
  filter is an iterative index scan of the same table, no join.
- `chunk_dates_by_month`: partitioned by submission month, one HNSW index per month: a recent
  window searches only its months' small graphs and a nightly increment writes into the newest
  month's index, but a search with no date filter has to search every month's graph.

Both are copies made from `chunks` and `papers`, so they can be built beside a loaded corpus and
dropped after the measurement."""

from __future__ import annotations

import time
from datetime import date, datetime
from itertools import pairwise

import numpy as np
import psycopg

from corpus.chunk_index import build_memory
from corpus.papers import to_pgvector_text

FLAT = "chunk_dates_flat"
BY_MONTH = "chunk_dates_by_month"
LAYOUTS = (FLAT, BY_MONTH)
_COLUMNS = (
    "paper_id text NOT NULL, seq integer NOT NULL, published timestamptz NOT NULL,"
    " embedding halfvec(384) NOT NULL"
)


def _month_starts(first: date, last: date) -> list[date]:
    """The first day of every month from `first`'s to the one after `last`'s."""
    out = [date(first.year, first.month, 1)]
    while out[-1] <= last:
        y, m = out[-1].year, out[-1].month
        out.append(date(y + (m == 12), m % 12 + 1, 1))
    return out


def create_layouts(conn: psycopg.Connection, first: date, last: date) -> int:
    """Both tables, empty, with one partition per month from `first` to `last` (any day of
    them); returns the number of month partitions. Drops earlier copies first."""
    drop_layouts(conn)
    conn.execute(f"CREATE TABLE {FLAT} ({_COLUMNS})")
    conn.execute(f"CREATE TABLE {BY_MONTH} ({_COLUMNS}) PARTITION BY RANGE (published)")
    starts = _month_starts(first, last)
    for start, end in pairwise(starts):
        conn.execute(
            f"CREATE TABLE {BY_MONTH}_{start:%Y_%m} PARTITION OF {BY_MONTH}"
            f" FOR VALUES FROM ('{start:%Y-%m-%d}') TO ('{end:%Y-%m-%d}')"
        )
    return len(starts) - 1


def copy_from_chunks(conn: psycopg.Connection, table: str) -> int:
    """Every chunk vector with its paper's submission date; returns the rows written."""
    cur = conn.execute(
        f"INSERT INTO {_checked(table)} (paper_id, seq, published, embedding)"
        " SELECT c.paper_id, c.seq, p.published, c.embedding FROM chunks c JOIN papers p USING (paper_id)"
        " WHERE p.published IS NOT NULL"
    )
    conn.execute(f"ANALYZE {table}")
    return cur.rowcount


def build_index(
    conn: psycopg.Connection, table: str, m: int, ef_construction: int, maintenance_work_mem_mb: int | None
) -> float:
    """The HNSW index (on a partitioned table: one per partition); returns the seconds it took."""
    started = time.perf_counter()
    with build_memory(conn, maintenance_work_mem_mb):
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {_checked(table)}_hnsw ON {table} USING hnsw"
            f" (embedding halfvec_cosine_ops) WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
        )
    return time.perf_counter() - started


def nearest(
    conn: psycopg.Connection, table: str, query_vector: np.ndarray, k: int, since: datetime | None = None
) -> list[tuple[str, int, float]]:
    """(paper_id, seq, cosine similarity) of the k nearest chunks, optionally published since
    `since`. The flat table filters by an iterative scan (its graph walk goes on until k rows
    pass); the partitioned one by partition pruning, each remaining month's graph searched."""
    where, params = ("", ()) if since is None else (" WHERE published >= %s", (since,))
    with conn.transaction():
        if since is not None and table == FLAT:
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(
            f"SELECT paper_id, seq, embedding <=> %s::halfvec AS d FROM {_checked(table)}{where}"
            " ORDER BY d LIMIT %s",
            (to_pgvector_text(query_vector), *params, k),
        ).fetchall()
    # relaxed_order may return rows slightly out of order
    return sorted(((r[0], int(r[1]), 1.0 - float(r[2])) for r in rows), key=lambda r: -r[2])


def add_paper_chunks(
    conn: psycopg.Connection, table: str, paper_id: str, published: datetime, vectors: np.ndarray
) -> None:
    """One paper's chunk vectors, as a nightly increment writes them (into the index row by row)."""
    sql = f"COPY {_checked(table)} (paper_id, seq, published, embedding) FROM STDIN"
    with conn.cursor() as cur, cur.copy(sql) as copy:
        for seq, v in enumerate(vectors):
            copy.write_row((paper_id, seq, published, to_pgvector_text(v)))


def table_bytes(conn: psycopg.Connection, table: str) -> tuple[int, int]:
    """(heap, indexes) bytes of a layout, its partitions summed."""
    row = conn.execute(
        "SELECT coalesce(sum(pg_table_size(r)), 0), coalesce(sum(pg_indexes_size(r)), 0)"
        " FROM (SELECT %s::regclass AS r UNION ALL"
        "       SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = %s::regclass) t",
        (_checked(table), table),
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def drop_layouts(conn: psycopg.Connection) -> None:
    for table in LAYOUTS:
        conn.execute(f"DROP TABLE IF EXISTS {table} CASCADE")


def _checked(table: str) -> str:
    if table not in LAYOUTS:  # names are put into SQL text
        raise ValueError(f"unknown chunk layout: {table}")
    return table
