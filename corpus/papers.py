"""SQL for the papers/chunks table family: writes (one transaction per paper) and searches."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np
import psycopg
from pgvector.utils import HalfVector
from pydantic import BaseModel

from corpus.embedder import to_pgvector_text
from corpus.ids import chunk_id
from corpus.models import ChunkHit, ChunkRecord, PaperHit, PaperMeta, PaperRecord


def pack_text(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), 6)


def unpack_text(data: bytes) -> str:
    return zlib.decompress(data).decode("utf-8")


# Metadata columns, in the order of PaperMeta's fields; writers and readers build on this one list.
_META_COLUMNS = (
    "paper_id, version, title, authors, abstract, categories, primary_category, published, updated"
)
_PAPER_COLUMNS = f"{_META_COLUMNS}, pdf_url, source, source_sha256, n_pages, n_chunks, embedding, tsv"
_SNAPSHOT_COLUMNS = f"{_META_COLUMNS}, pdf_url, source, embedding"


LEXICAL_BODY_CHARS = 30_000  # the opening of a paper (introduction, method) feeds its lexical index


def lexical_body(texts: Iterable[str]) -> str:
    """The opening of a paper's full text, for its lexical index."""
    parts, size = [], 0
    for text in texts:
        if size >= LEXICAL_BODY_CHARS:
            break
        parts.append(text)
        size += len(text) + 1
    return " ".join(parts)[:LEXICAL_BODY_CHARS]


def set_lexical_body(conn: psycopg.Connection, paper_id: str, body: str | None) -> None:
    """Rebuild one paper's lexical index entry (rows stored before full text was indexed)."""
    conn.execute(
        "UPDATE papers SET tsv = paper_tsv(title, abstract, authors, %s) WHERE paper_id = %s",
        (body, paper_id),
    )


class StoredFromFile(BaseModel):
    """A paper stored from a PDF file, with the description it was stored with."""

    paper_id: str
    title: str
    abstract: str | None
    authors: list[str]
    location: str | None  # the file's path when it was ingested
    described_from_pdf: bool = False  # title, authors, abstract read from its first page


def set_described_from_pdf(conn: psycopg.Connection, paper_id: str, from_pdf: bool) -> None:
    """Whether the paper's title, authors and abstract are the reading of its own first page."""
    conn.execute("UPDATE papers SET described_from_pdf = %s WHERE paper_id = %s", (from_pdf, paper_id))


def delete_papers(conn: psycopg.Connection, paper_ids: list[str]) -> int:
    """Remove papers with their chunks and summaries (cascaded); returns how many were removed."""
    return conn.execute("DELETE FROM papers WHERE paper_id = ANY(%s)", (paper_ids,)).rowcount


def stored_from_files(conn: psycopg.Connection) -> list[StoredFromFile]:
    """Papers ingested from a folder of PDFs or from PDF tar archives, by id."""
    rows = conn.execute(
        "SELECT p.paper_id, p.title, p.abstract, p.authors, i.location, p.described_from_pdf"
        " FROM papers p LEFT JOIN ingest_items i USING (paper_id)"
        " WHERE p.source IN ('pdf-dir', 'pdf-tar') ORDER BY p.paper_id"
    )
    return [
        StoredFromFile(
            paper_id=r[0],
            title=r[1],
            abstract=r[2],
            authors=r[3] or [],
            location=r[4],
            described_from_pdf=bool(r[5]),
        )
        for r in rows
    ]


def without_lexical_body(conn: psycopg.Connection) -> list[str]:
    """Papers with chunks whose lexical index lacks their full text (stored before migration 007)."""
    rows = conn.execute(
        "SELECT paper_id FROM papers WHERE n_chunks > 0 AND NOT EXISTS"
        " (SELECT 1 FROM unnest(tsv) AS u WHERE 'D' = ANY(u.weights)) ORDER BY paper_id"
    )
    return [r[0] for r in rows]


def set_description(
    conn: psycopg.Connection,
    paper_id: str,
    *,
    title: str,
    abstract: str | None,
    authors: list[str],
    paper_vector: np.ndarray,
    body: str | None,
) -> None:
    """Correct a stored paper's title, abstract and authors, with the vector and lexical index
    made of them."""
    conn.execute(
        "UPDATE papers SET title = %s, abstract = %s, authors = %s, embedding = %s::halfvec,"
        " tsv = paper_tsv(%s, %s, %s, %s) WHERE paper_id = %s",
        (title, abstract, authors, to_pgvector_text(paper_vector), title, abstract, authors, body, paper_id),
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
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::halfvec,
                paper_tsv(%s, %s, %s, %s))
        ON CONFLICT (paper_id) DO UPDATE SET
            version = EXCLUDED.version, title = EXCLUDED.title, authors = EXCLUDED.authors,
            abstract = EXCLUDED.abstract, categories = EXCLUDED.categories,
            primary_category = EXCLUDED.primary_category,
            published = COALESCE(papers.published, EXCLUDED.published), updated = EXCLUDED.updated,
            pdf_url = EXCLUDED.pdf_url, source = EXCLUDED.source, source_sha256 = EXCLUDED.source_sha256,
            n_pages = EXCLUDED.n_pages, n_chunks = EXCLUDED.n_chunks, embedding = EXCLUDED.embedding,
            tsv = EXCLUDED.tsv, ingested_at = now()
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
            title,
            meta.abstract,
            meta.authors,
            lexical_body(chunk.text for chunk in chunks),
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


def stored_ids(conn: psycopg.Connection, paper_ids: list[str]) -> set[str]:
    """Which of these papers are stored (from any source)."""
    rows = conn.execute("SELECT paper_id FROM papers WHERE paper_id = ANY(%s)", (paper_ids,)).fetchall()
    return {r[0] for r in rows}


def copy_metadata_only(
    conn: psycopg.Connection, metas: Sequence[PaperMeta], pdf_urls: Sequence[str], vectors: np.ndarray
) -> None:
    """Bulk-add papers known only by their metadata (no PDF, no chunks) with their title + abstract
    vectors, in one COPY. Call inside a transaction, for papers not stored yet."""
    with conn.cursor().copy(f"COPY papers ({_SNAPSHOT_COLUMNS}) FROM STDIN") as copy:
        for meta, url, vector in zip(metas, pdf_urls, vectors, strict=True):
            copy.write_row(
                (
                    meta.paper_id,
                    meta.version,
                    meta.title,
                    meta.authors,
                    meta.abstract,
                    meta.categories,
                    meta.primary_category,
                    meta.published,
                    meta.updated,
                    url,
                    "snapshot",
                    to_pgvector_text(vector),
                )
            )
    conn.execute(
        "UPDATE papers SET tsv = paper_tsv(title, abstract, authors, NULL) WHERE paper_id = ANY(%s)",
        ([m.paper_id for m in metas],),
    )


def newest_published(conn: psycopg.Connection) -> datetime | None:
    return conn.execute("SELECT max(published) FROM papers").fetchone()[0]  # type: ignore[index]


def count_papers(conn: psycopg.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM papers").fetchone()[0])  # type: ignore[index]


def count_papers_with_chunks(conn: psycopg.Connection) -> int:
    """Papers stored with their full text (not metadata alone)."""
    return int(conn.execute("SELECT count(*) FROM papers WHERE n_chunks > 0").fetchone()[0])  # type: ignore[index]


def is_empty(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT NOT EXISTS (SELECT 1 FROM papers)").fetchone()[0]  # type: ignore[index]


def paper_version(conn: psycopg.Connection, paper_id: str) -> tuple[int | None, str | None] | None:
    row = conn.execute(
        "SELECT version, source_sha256 FROM papers WHERE paper_id = %s", (paper_id,)
    ).fetchone()
    return (row[0], row[1]) if row else None


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


def search_chunks_binary(
    conn: psycopg.Connection, query_vector: np.ndarray, k: int = 10, candidates: int = 100
) -> list[tuple[str, int, float]]:
    """(paper_id, seq, distance) of the nearest chunks through the binary-quantized index: the
    `candidates` nearest by Hamming distance of sign bits, re-ranked by halfvec cosine distance."""
    rows = conn.execute(
        "SELECT paper_id, seq, d FROM (SELECT paper_id, seq, embedding <=> %(q)s::halfvec AS d FROM chunks"
        "  ORDER BY binary_quantize(embedding)::bit(384) <~> binary_quantize(%(q)s::halfvec)::bit(384)"
        "  LIMIT %(n)s) candidates ORDER BY d LIMIT %(k)s",
        {"q": to_pgvector_text(query_vector), "n": candidates, "k": k},
    ).fetchall()
    return [(r[0], r[1], float(r[2])) for r in rows]


def exact_nearest_chunks(conn: psycopg.Connection, query_vector: np.ndarray, k: int) -> list[tuple[str, int]]:
    """(paper_id, seq) of the k nearest chunks by a full scan: the truth an index's recall is
    measured against."""
    with conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        rows = conn.execute(
            "SELECT paper_id, seq FROM chunks ORDER BY embedding <=> %s::halfvec LIMIT %s",
            (to_pgvector_text(query_vector), k),
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def chunk_counts(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(paper_id, n_chunks) of every paper, by id."""
    return [(r[0], r[1]) for r in conn.execute("SELECT paper_id, n_chunks FROM papers ORDER BY paper_id")]


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


# ---- reads for the agent's tools ---------------------------------------------------------------

_META = f"{_META_COLUMNS}, pdf_url, n_chunks"


def _paper(row: tuple) -> PaperRecord:
    return PaperRecord(
        paper_id=row[0],
        version=row[1],
        title=row[2],
        authors=list(row[3] or []),
        abstract=row[4],
        categories=list(row[5] or []),
        primary_category=row[6],
        published=row[7],
        updated=row[8],
        pdf_url=row[9],
        n_chunks=row[10],
    )


def described_with_metadata(conn: psycopg.Connection, paper_id: str) -> PaperRecord | None:
    """The stored paper when its description came with it (arXiv, a metadata file), not read from
    its first page; None otherwise."""
    row = conn.execute(
        f"SELECT {_META} FROM papers WHERE paper_id = %s AND NOT described_from_pdf", (paper_id,)
    ).fetchone()
    return _paper(row) if row else None


def get_paper(conn: psycopg.Connection, paper_id: str) -> PaperRecord | None:
    row = conn.execute(f"SELECT {_META} FROM papers WHERE paper_id = %s", (paper_id,)).fetchone()
    return _paper(row) if row else None


def get_papers(conn: psycopg.Connection, paper_ids: list[str]) -> dict[str, PaperRecord]:
    rows = conn.execute(f"SELECT {_META} FROM papers WHERE paper_id = ANY(%s)", (paper_ids,)).fetchall()
    return {r[0]: _paper(r) for r in rows}


def get_chunk(conn: psycopg.Connection, paper_id: str, seq: int) -> ChunkHit | None:
    row = conn.execute(
        "SELECT paper_id, seq, text_z, page FROM chunks WHERE paper_id = %s AND seq = %s", (paper_id, seq)
    ).fetchone()
    if row is None:
        return None
    return ChunkHit(paper_id=row[0], seq=row[1], text=unpack_text(row[2]), page=row[3], score=1.0)


def front_matter(conn: psycopg.Connection, paper_ids: list[str], chars: int) -> dict[str, str]:
    """Per paper, the opening of its first passage: title, authors and affiliations as printed."""
    rows = conn.execute(
        "SELECT paper_id, text_z FROM chunks WHERE paper_id = ANY(%s) AND seq = 0", (paper_ids,)
    ).fetchall()
    return {r[0]: unpack_text(r[1])[:chars] for r in rows}


ABSTRACT_CHUNKS = 4  # a title, an author block and a long abstract fill at most the first four


def abstract_chunks(conn: psycopg.Connection, paper_ids: list[str]) -> dict[str, str]:
    """Per paper, the id of its opening chunk closest to its own title + abstract vector: where a
    paper that was only listed (by title and abstract) says what the listing showed. Among the
    first ABSTRACT_CHUNKS only: over the whole paper, a conclusion or a results paragraph that
    restates the abstract's claims sometimes came closer than the abstract itself."""
    rows = conn.execute(
        "SELECT p.paper_id, best.seq FROM papers p CROSS JOIN LATERAL ("
        "  SELECT c.seq FROM chunks c WHERE c.paper_id = p.paper_id AND c.seq < %s"
        "  ORDER BY c.embedding <=> p.embedding LIMIT 1) best"
        " WHERE p.paper_id = ANY(%s) AND p.embedding IS NOT NULL",
        (ABSTRACT_CHUNKS, paper_ids),
    ).fetchall()
    return {r[0]: chunk_id(r[0], r[1]) for r in rows}


# Reciprocal-rank fusion: a list's first place counts 1/61, its tenth 1/70. 10 (a first place
# counting more) found the gold paper more often on the grounded benchmark (top 5 0.945 -> 0.966)
# but let a paper first in one list alone into listings, and answers were worse: kept at 60.
RRF_K = 60


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+|\d+[A-Za-z][A-Za-z0-9]*")
# Words of requests rather than of topics ("which papers in the corpus compare methods for ..."):
# they match most papers and would drown the words that matter. The server drops English stop
# words itself.
_REQUEST_WORDS = frozenset(
    [
        "paper",
        "papers",
        "corpus",
        "article",
        "articles",
        "work",
        "works",
        "study",
        "studies",
        "research",
        "author",
        "authors",
        "method",
        "methods",
        "approach",
        "approaches",
        "technique",
        "model",
        "models",
        "result",
        "results",
        "propose",
        "proposed",
        "use",
        "used",
        "using",
        "show",
        "shows",
        "describe",
        "described",
        "explain",
        "compare",
        "comparison",
        "differ",
        "difference",
        "different",
        "tell",
        "know",
        "find",
        "give",
        "mean",
        "means",
        "main",
        "key",
        "new",
        "recent",
        "also",
        "like",
        "would",
        "could",
    ]
)


def lexical_query(text: str) -> str | None:
    """A tsquery matching any of the text's topic words (the server stems them); `ts_rank` then
    favours papers with more of them, in the title and abstract above the body."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(text))
    return " | ".join(w for w in words if w not in _REQUEST_WORDS) or None


RECENT_CHUNK_PAPERS = 60  # with a date filter, the best chunk of this many candidate papers is compared


def _nearest_since(conn: psycopg.Connection, sql: str, params: tuple) -> list[tuple[str, float]]:
    """Run a nearest-neighbour query whose date filter is part of the index scan: pgvector's
    iterative scan keeps walking the graph until the LIMIT is met by rows that pass the filter, so
    a recent window never comes back short; where the window is a small share of the corpus, the
    planner reads it by date instead (papers_recency_idx) and sorts it exactly."""
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(sql, params).fetchall()
        conn.execute("SET LOCAL hnsw.iterative_scan = off")
    return sorted(((r[0], float(r[1])) for r in rows), key=lambda r: r[1])  # relaxed: re-sorted here


def related_papers(
    conn: psycopg.Connection,
    query_vector: np.ndarray,
    k: int = 5,
    since: datetime | None = None,
    pool: int = 60,
    lexical_text: str | None = None,
) -> list[tuple[PaperRecord, float]]:
    """Papers for a query, each with its relevance: the best cosine similarity of its title +
    abstract vector or of one of its chunks (chunk hits aggregated per paper).

    Without `lexical_text` (dense only) papers are ranked by that similarity. With it (hybrid),
    three ranked lists are fused by reciprocal rank: papers by title + abstract vector, papers by
    their best chunk, and papers by full-text match of the words of `lexical_text`. With `since`,
    only papers published since then, newest first among the relevant ones: every list is
    filtered by date in the database (a pool filtered afterwards came back short once the window
    was a small share of a large corpus)."""
    vec = to_pgvector_text(query_vector)
    scores: dict[str, float] = {}
    lists: list[list[str]] = [[], []]

    def take(which: int, rows: Iterable[tuple[str, float]]) -> None:
        for paper_id, d in rows:
            scores[paper_id] = max(scores.get(paper_id, -1.0), 1.0 - float(d))
            if paper_id not in lists[which]:
                lists[which].append(paper_id)

    chunk_rows = conn.execute(
        "SELECT paper_id, embedding <=> %s::halfvec AS d FROM chunks ORDER BY d LIMIT %s", (vec, pool * 3)
    ).fetchall()
    if since is None:
        take(
            0,
            conn.execute(
                "SELECT paper_id, embedding <=> %s::halfvec AS d FROM papers WHERE embedding IS NOT NULL"
                " ORDER BY d LIMIT %s",
                (vec, pool),
            ).fetchall(),
        )
    else:
        take(
            0,
            _nearest_since(
                conn,
                "SELECT paper_id, embedding <=> %s::halfvec AS d FROM papers"
                " WHERE embedding IS NOT NULL AND published >= %s ORDER BY d LIMIT %s",
                (vec, since, pool),
            ),
        )
        # Chunks: the nearest of the whole corpus whose paper is recent, and the best chunk of each
        # recent paper the vector list found (exact, a few thousand rows whatever the corpus size).
        # A date-filtered chunk scan (a join, or an iterative scan) ranked best in bench/scale.py
        # but took 35-180 ms at 1M chunks, growing with the window's share of the corpus.
        recent = {
            r[0]
            for r in conn.execute(
                "SELECT paper_id FROM papers WHERE paper_id = ANY(%s) AND published >= %s",
                (list({r[0] for r in chunk_rows}), since),
            )
        }
        chunk_rows = [r for r in chunk_rows if r[0] in recent]
        chunk_rows += conn.execute(
            "SELECT paper_id, min(embedding <=> %s::halfvec) AS d FROM chunks WHERE paper_id = ANY(%s)"
            " GROUP BY paper_id",
            (vec, lists[0][:RECENT_CHUNK_PAPERS]),
        ).fetchall()
        chunk_rows.sort(key=lambda r: r[1])
    take(1, chunk_rows)
    query = lexical_query(lexical_text) if lexical_text else None
    if query:
        date_filter = " AND published >= %s" if since is not None else ""
        lists.append(
            [
                r[0]
                for r in conn.execute(
                    "SELECT paper_id FROM papers, to_tsquery('english', %s) q WHERE tsv @@ q"
                    f"{date_filter} ORDER BY ts_rank(tsv, q, 1) DESC LIMIT %s",
                    (query, since, pool) if since is not None else (query, pool),
                )
            ]
        )
        unscored = [p for p in lists[2] if p not in scores]
        if unscored:
            for paper_id, d in conn.execute(
                "SELECT paper_id, embedding <=> %s::halfvec FROM papers WHERE paper_id = ANY(%s)",
                (vec, unscored),
            ).fetchall():
                scores[paper_id] = 1.0 - float(d) if d is not None else 0.0
        fused: dict[str, float] = {}
        for ranked_ids in lists:
            for rank, paper_id in enumerate(ranked_ids, 1):
                fused[paper_id] = fused.get(paper_id, 0.0) + 1.0 / (RRF_K + rank)
        order = fused
    else:
        order = scores
    records = get_papers(conn, list(order))
    ranked = sorted(records.values(), key=lambda p: -order[p.paper_id])
    if since is not None:  # every list above was filtered by date: the newest of the most relevant
        ranked = sorted(ranked[: k * 3], key=lambda p: p.published, reverse=True)  # type: ignore[arg-type,return-value]
    return [(p, scores.get(p.paper_id, 0.0)) for p in ranked[:k]]


MENTIONS_IN_FULL_TEXT = 2  # past the indexed opening, times a paper names a word to mention it


def mention(conn: psycopg.Connection, paper_ids: list[str], word: str) -> bool:
    """Whether any of these papers has `word` in its lexical index (title, abstract, authors, the
    opening of its body) or else in its full text; true for a word the index does not keep (a
    stop word)."""
    query = lexical_query(word)
    if not paper_ids:
        return False
    # A word the lexical index does not keep leaves nothing to check: a request word ("Paper" in
    # "Paper Plain") gives no query, a stop word ("All" in "Attention Is All You Need") an empty one.
    if not query:
        return True
    row = conn.execute(
        "SELECT numnode(q) = 0 OR EXISTS (SELECT 1 FROM papers WHERE paper_id = ANY(%s) AND tsv @@ q)"
        " FROM to_tsquery('english', %s) AS q",
        (paper_ids, query.replace(" | ", " & ")),
    ).fetchone()
    if row and row[0]:
        return True
    # The index holds a body's first LEXICAL_BODY_CHARS only: a review discusses ChemCrow on its
    # page 20, and the question about it was declined as not covered. Rarely reached (a name the
    # question asks about and the index lacks), so the chunks are read here, not indexed. Named
    # as written and at least twice in one paper: a reference-list entry ("ColBERT: Efficient
    # and effective passage search") or "Satinder" is no paper covering ColBERT or SAT.
    # a name of several words as papers also write it: "Hugging Face", "HuggingFace", "Hugging-Face"
    body = r"[-\s]?".join(re.escape(part) for part in word.split())
    pattern = re.compile(rf"\b{body}\b", 0 if word != word.lower() else re.IGNORECASE)
    times: dict[str, int] = {}
    for paper_id, text_z in conn.execute(
        "SELECT paper_id, text_z FROM chunks WHERE paper_id = ANY(%s)", (paper_ids,)
    ):
        times[paper_id] = times.get(paper_id, 0) + len(pattern.findall(unpack_text(text_z)))
        if times[paper_id] >= MENTIONS_IN_FULL_TEXT:
            return True
    return False


def words_held(
    conn: psycopg.Connection, paper_ids: list[str], words: list[str]
) -> dict[str, tuple[int, int]]:
    """Of `words`, how many each paper's lexical index holds (title, abstract, authors, the opening
    of its body; stemmed, so "finch" holds "finches") and how often they occur there. Papers
    holding none are left out; a word the index does not keep counts for no paper."""
    if not paper_ids or not words:
        return {}
    # a word may stem to several lexemes ("architecture-search"): it is held when all of them are
    rows = conn.execute(
        "SELECT p.paper_id, count(*),"
        " sum((SELECT coalesce(sum(cardinality(l.positions)), 0) FROM unnest(p.tsv) AS l"
        "      WHERE l.lexeme = ANY(tsvector_to_array(to_tsvector('english', w.word)))))"
        " FROM papers p JOIN unnest(%s::text[]) AS w(word) ON p.tsv @@ plainto_tsquery('english', w.word)"
        " WHERE p.paper_id = ANY(%s) GROUP BY p.paper_id",
        (words, paper_ids),
    ).fetchall()
    return {paper_id: (int(n), int(times)) for paper_id, n, times in rows}


def titled_by(conn: psycopg.Connection, names: list[str], limit: int = 20) -> list[tuple[str, str]]:
    """(paper id, title) of papers whose title starts with one of `names` (exact case: "ZeRO: ...");
    the lexical index narrows the papers first."""
    if not names:
        return []
    return conn.execute(
        "SELECT p.paper_id, p.title FROM papers p"
        " JOIN unnest(%s::text[]) AS w(name) ON p.tsv @@ plainto_tsquery('english', w.name)"
        " WHERE starts_with(p.title, w.name) LIMIT %s",
        (names, limit),
    ).fetchall()


def titled_as(conn: psycopg.Connection, phrases: list[str], limit: int = 5) -> list[str]:
    """The ids of the papers whose title, or its head before a colon, is one of
    `phrases`, each written as lower-case letters and digits one space apart ("attention is all
    you need"), in the phrases' order, at most `limit`; the lexical index narrows the papers first
    (a title's every word in the paper's lexical entry), and titles are short to compare."""
    if not phrases:
        return []
    title = "trim(regexp_replace(lower(p.title), '[^a-z0-9]+', ' ', 'g'))"
    head = "trim(regexp_replace(lower(split_part(p.title, ':', 1)), '[^a-z0-9]+', ' ', 'g'))"
    rows = conn.execute(
        "SELECT p.paper_id FROM papers p"
        " JOIN unnest(%s::text[]) WITH ORDINALITY AS w(phrase, at)"
        " ON p.tsv @@ plainto_tsquery('english', w.phrase)"
        f" WHERE {title} = w.phrase OR {head} = w.phrase ORDER BY w.at, p.paper_id LIMIT %s",
        (phrases, limit),
    ).fetchall()
    return list(dict.fromkeys(pid for (pid,) in rows))


# ---- bulk loads (backfills and the scale benchmark) ----------------------------------------------


class BulkPaper(BaseModel):
    """A paper row as a bulk load writes it; its lexical index entry is filled afterwards
    (`fill_lexical_index`), in one statement instead of one per paper."""

    meta: PaperMeta
    title: str
    source: str
    pdf_url: str | None = None
    n_chunks: int = 0
    vector: np.ndarray | None = None

    model_config = {"arbitrary_types_allowed": True}


def copy_papers(conn: psycopg.Connection, rows: Iterable[BulkPaper]) -> int:
    """COPY new papers (binary: no float formatting); returns how many. Inside a transaction."""
    n = 0
    columns = f"{_META_COLUMNS}, pdf_url, source, n_chunks, embedding"
    with conn.cursor().copy(f"COPY papers ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(
            [
                *("text", "int4", "text", "text[]", "text", "text[]", "text", "timestamptz"),
                *("timestamptz", "text", "text", "int4", "halfvec"),
            ]
        )
        for row in rows:
            m = row.meta
            vector = HalfVector(row.vector) if row.vector is not None else None
            copy.write_row(
                (
                    *(m.paper_id, m.version, row.title, m.authors, m.abstract, m.categories),
                    *(m.primary_category, m.published, m.updated, row.pdf_url, row.source),
                    *(row.n_chunks, vector),
                )
            )
            n += 1
    return n


def copy_chunks(
    conn: psycopg.Connection, rows: Iterable[tuple[str, int, int | None, int | None, bytes, np.ndarray]]
) -> int:
    """COPY new chunks, (paper_id, seq, page, char_start, text_z, vector) each, text already
    packed (`pack_text`); returns how many. Binary COPY: formatting 384 floats as text per row
    was most of the cost of a text COPY."""
    n = 0
    with conn.cursor().copy(
        "COPY chunks (paper_id, seq, page, char_start, text_z, embedding) FROM STDIN WITH (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["text", "int4", "int4", "int4", "bytea", "halfvec"])
        for paper_id, seq, page, char_start, text_z, vector in rows:
            copy.write_row((paper_id, seq, page, char_start, text_z, HalfVector(vector)))
            n += 1
    return n


def fill_lexical_index(conn: psycopg.Connection) -> int:
    """Give papers loaded without a lexical index entry their title, abstract and authors words."""
    cur = conn.execute("UPDATE papers SET tsv = paper_tsv(title, abstract, authors, NULL) WHERE tsv IS NULL")
    return cur.rowcount


def analyze(conn: psycopg.Connection, vacuum: bool = False) -> None:
    """Fresh planner statistics after a bulk load (the planner picks indexes by them); `vacuum`
    also clears deleted rows, which index scans would otherwise still visit. `conn` in autocommit."""
    command = "VACUUM ANALYZE" if vacuum else "ANALYZE"
    conn.execute(f"{command} papers")
    conn.execute(f"{command} chunks")
