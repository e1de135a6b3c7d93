"""The HNSW index over chunk vectors: whether it exists, dropping it, building it.

A bulk load that adds a large share of the corpus is faster without the index (rows are written
at COPY speed) and an index built once afterwards is as good as one updated row by row; the
ingest pipeline uses these to do so. A corpus whose index is missing (a bulk load interrupted
before the build) still answers, by exact scans, and the next ingest or `chatpapers db index`
builds it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

CHUNK_INDEX = "chunks_embedding_hnsw"
_NEXT_INDEX = "chunks_embedding_hnsw_next"  # a rebuild's new index until it replaces the old one
DEFAULT_M, DEFAULT_EF_CONSTRUCTION = 16, 64  # pgvector's, what the migration's index was built with


def _definition(name: str, m: int, ef_construction: int, concurrently: bool = False) -> str:
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {name} ON chunks"
        f" USING hnsw (embedding halfvec_cosine_ops)"
        f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
    )


# Binary quantization: an HNSW graph over the sign bits of each vector (48 bytes instead of 768),
# searched by Hamming distance, its candidates re-ranked by the exact halfvec distance
# (corpus.papers.search_chunks_binary). Measured against the halfvec index by bench/scale.py.
BINARY_INDEX = "chunks_embedding_bits_hnsw"
_BINARY_DEFINITION = (
    f"CREATE INDEX IF NOT EXISTS {BINARY_INDEX} ON chunks"
    " USING hnsw ((binary_quantize(embedding)::bit(384)) bit_hamming_ops)"
)


# Session advisory lock of the run that may drop and build the index: a second ingest running
# beside a bulk load would otherwise take the dropped index for an interrupted load's and build
# it under the load (which then writes row by row into it).
_INDEX_WORK_LOCK = 0x63686B69  # "chki"


def claim_index_work(conn: psycopg.Connection) -> bool:
    """True when this session may drop and build the chunk index (held until `conn` closes);
    False while another session holds it."""
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_INDEX_WORK_LOCK,)).fetchone()
    return bool(row and row[0])


def chunk_index_exists(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (CHUNK_INDEX,)).fetchone()
    return bool(row and row[0])


def chunk_count(conn: psycopg.Connection) -> int:
    """Rows in `chunks` as the planner estimates them (exact counts scan the table: minutes at
    10M); -1 before the table was ever analysed."""
    row = conn.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = 'chunks'::regclass").fetchone()
    return int(row[0]) if row else -1


def drop_chunk_index(conn: psycopg.Connection, lock_timeout_s: float | None = None) -> bool:
    """Drop the index; False when `lock_timeout_s` passed first. DROP INDEX waits for every query
    using `chunks` to end, and every new search queues behind the waiting drop: a running `serve`
    would stall for as long. `conn` must be in autocommit."""
    if lock_timeout_s is not None:
        conn.execute(f"SET lock_timeout = '{int(lock_timeout_s * 1000)}ms'")
    try:
        conn.execute(f"DROP INDEX IF EXISTS {CHUNK_INDEX}")
    except psycopg.errors.LockNotAvailable:
        return False
    finally:
        if lock_timeout_s is not None:
            conn.execute("RESET lock_timeout")
    return True


def build_chunk_index(
    conn: psycopg.Connection,
    maintenance_work_mem_mb: int | None = None,
    binary: bool = False,
    m: int = DEFAULT_M,
    ef_construction: int = DEFAULT_EF_CONSTRUCTION,
) -> float:
    """Build the index unless it exists; returns the seconds it took. `conn` must be in
    autocommit. The graph is built in memory when it fits in maintenance_work_mem (much faster
    than spilling), so a caller that knows the machine passes a budget for this session."""
    started = time.perf_counter()
    with build_memory(conn, maintenance_work_mem_mb):
        conn.execute(_BINARY_DEFINITION if binary else _definition(CHUNK_INDEX, m, ef_construction))
    return time.perf_counter() - started


def rebuild_chunk_index(
    conn: psycopg.Connection,
    maintenance_work_mem_mb: int | None = None,
    m: int = DEFAULT_M,
    ef_construction: int = DEFAULT_EF_CONSTRUCTION,
) -> float:
    """Build the index again (new graph parameters) while searches go on using the old one: the
    new index is built CONCURRENTLY beside it and takes its name in one short transaction. Needs
    the disk of a second index while it runs. Returns the seconds it took."""
    started = time.perf_counter()
    conn.execute(f"DROP INDEX IF EXISTS {_NEXT_INDEX}")  # an earlier rebuild's invalid leftover
    with build_memory(conn, maintenance_work_mem_mb):
        try:
            conn.execute(_definition(_NEXT_INDEX, m, ef_construction, concurrently=True))
        except BaseException:
            # an invalid half-built index would slow every write; a broken connection leaves it
            # to the next rebuild, which drops it first
            with contextlib.suppress(psycopg.Error):
                conn.execute(f"DROP INDEX IF EXISTS {_NEXT_INDEX}")
            raise
    with conn.transaction():
        conn.execute(f"DROP INDEX IF EXISTS {CHUNK_INDEX}")
        conn.execute(f"ALTER INDEX {_NEXT_INDEX} RENAME TO {CHUNK_INDEX}")
    return time.perf_counter() - started


def index_parameters(conn: psycopg.Connection) -> tuple[int, int] | None:
    """(m, ef_construction) the index was built with; None when it is missing."""
    row = conn.execute(
        "SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = to_regclass(%s)", (CHUNK_INDEX,)
    ).fetchone()
    if row is None:
        return None
    options = dict(str(o).split("=", 1) for o in row[0])
    return int(options.get("m", DEFAULT_M)), int(options.get("ef_construction", DEFAULT_EF_CONSTRUCTION))


@contextmanager
def build_memory(conn: psycopg.Connection, megabytes: int | None) -> Iterator[None]:
    """maintenance_work_mem for an index build on `conn`, reset afterwards; None keeps the server's."""
    if megabytes:
        conn.execute(f"SET maintenance_work_mem = '{int(megabytes)}MB'")
    try:
        yield
    finally:
        if megabytes:
            conn.execute("RESET maintenance_work_mem")


def drop_binary_index(conn: psycopg.Connection) -> None:
    conn.execute(f"DROP INDEX IF EXISTS {BINARY_INDEX}")


def index_bytes(conn: psycopg.Connection) -> dict[str, int]:
    """On-disk size of each index of `chunks`."""
    rows = conn.execute(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index"
        " WHERE indrelid = 'chunks'::regclass"
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}
