"""SQL for the papers/chunks table family: writes (one transaction per paper) and searches."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import psycopg

from corpus.embedder import to_pgvector_text
from corpus.models import ChunkHit, ChunkRecord, PaperHit, PaperMeta


def pack_text(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), 6)


def unpack_text(data: bytes) -> str:
    return zlib.decompress(data).decode("utf-8")


_PAPER_COLUMNS = (
    "paper_id, version, title, authors, abstract, categories, primary_category, published, updated,"
    " pdf_url, source, source_sha256, n_pages, n_chunks, embedding"
)


def replace_paper(
    conn: psycopg.Connection,
    meta: PaperMeta,
    *,
    title: str,
    source: str,
    source_sha256: str | None,
    n_pages: int | None,
    paper_vector: np.ndarray | None,
    chunks: Sequence[ChunkRecord],
    chunk_vectors: np.ndarray,
) -> None:
    """Upsert the paper and swap its chunks for `chunks`. Call inside a transaction: readers see
    the old version or the new one, never a mix."""
    conn.execute(
        f"""
        INSERT INTO papers ({_PAPER_COLUMNS})
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::halfvec)
        ON CONFLICT (paper_id) DO UPDATE SET
            version = EXCLUDED.version, title = EXCLUDED.title, authors = EXCLUDED.authors,
            abstract = EXCLUDED.abstract, categories = EXCLUDED.categories,
            primary_category = EXCLUDED.primary_category,
            published = COALESCE(papers.published, EXCLUDED.published), updated = EXCLUDED.updated,
            pdf_url = EXCLUDED.pdf_url, source = EXCLUDED.source, source_sha256 = EXCLUDED.source_sha256,
            n_pages = EXCLUDED.n_pages, n_chunks = EXCLUDED.n_chunks, embedding = EXCLUDED.embedding,
            ingested_at = now()
        """,
        (
            meta.paper_id,
            meta.version,
            title,
            meta.authors,
            meta.abstract,
            meta.categories,
            meta.primary_category,
            meta.published,
            meta.updated,
            meta.pdf_url,
            source,
            source_sha256,
            n_pages,
            len(chunks),
            to_pgvector_text(paper_vector) if paper_vector is not None else None,
        ),
    )
    conn.execute("DELETE FROM chunks WHERE paper_id = %s", (meta.paper_id,))
    if not chunks:
        return
    with conn.cursor().copy(
        "COPY chunks (paper_id, seq, page, char_start, text_z, embedding) FROM STDIN"
    ) as copy:
        for chunk, vector in zip(chunks, chunk_vectors, strict=True):
            copy.write_row(
                (
                    meta.paper_id,
                    chunk.seq,
                    chunk.page,
                    chunk.char_start,
                    pack_text(chunk.text),
                    to_pgvector_text(vector),
                )
            )


def paper_version(conn: psycopg.Connection, paper_id: str) -> tuple[int | None, str | None] | None:
    row = conn.execute(
        "SELECT version, source_sha256 FROM papers WHERE paper_id = %s", (paper_id,)
    ).fetchone()
    return (row[0], row[1]) if row else None


def set_ef_search(conn: psycopg.Connection, ef_search: int) -> None:
    conn.execute(f"SET hnsw.ef_search = {int(ef_search)}")


def search_chunks(
    conn: psycopg.Connection, query_vector: np.ndarray, k: int = 10, paper_id: str | None = None
) -> list[ChunkHit]:
    """Nearest chunks by cosine distance (HNSW), optionally within one paper (exact, small)."""
    vec = to_pgvector_text(query_vector)
    if paper_id is None:
        rows = conn.execute(
            "SELECT paper_id, seq, text_z, page, embedding <=> %s::halfvec AS d"
            " FROM chunks ORDER BY d LIMIT %s",
            (vec, k),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT paper_id, seq, text_z, page, embedding <=> %s::halfvec AS d"
            " FROM chunks WHERE paper_id = %s ORDER BY d LIMIT %s",
            (vec, paper_id, k),
        ).fetchall()
    return [
        ChunkHit(paper_id=r[0], seq=r[1], text=unpack_text(r[2]), page=r[3], score=1.0 - float(r[4]))
        for r in rows
    ]


def chunk_texts(conn: psycopg.Connection, paper_id: str | None = None) -> list[tuple[str, int, str]]:
    """(paper_id, seq, text) in reading order, of one paper or of the whole corpus."""
    where, params = ("WHERE paper_id = %s", (paper_id,)) if paper_id else ("", ())
    rows = conn.execute(f"SELECT paper_id, seq, text_z FROM chunks {where} ORDER BY paper_id, seq", params)
    return [(r[0], r[1], unpack_text(r[2])) for r in rows]


def search_papers(conn: psycopg.Connection, query_vector: np.ndarray, k: int = 10) -> list[PaperHit]:
    rows = conn.execute(
        "SELECT paper_id, title, embedding <=> %s::halfvec AS d FROM papers"
        " WHERE embedding IS NOT NULL ORDER BY d LIMIT %s",
        (to_pgvector_text(query_vector), k),
    ).fetchall()
    return [PaperHit(paper_id=r[0], title=r[1], score=1.0 - float(r[2])) for r in rows]


def corpus_counts(conn: psycopg.Connection) -> dict[str, int]:
    row = conn.execute("SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM chunks)").fetchone()
    assert row is not None
    return {"papers": int(row[0]), "chunks": int(row[1])}


def storage_bytes(conn: psycopg.Connection) -> dict[str, int]:
    """On-disk size of the chunk table family: heap + TOAST + every index."""
    row = conn.execute(
        "SELECT pg_table_size('chunks'), pg_indexes_size('chunks'),"
        " pg_table_size('papers'), pg_indexes_size('papers'), pg_database_size(current_database())"
    ).fetchone()
    assert row is not None
    return {
        "chunks_table": int(row[0]),
        "chunks_indexes": int(row[1]),
        "papers_table": int(row[2]),
        "papers_indexes": int(row[3]),
        "database": int(row[4]),
    }
