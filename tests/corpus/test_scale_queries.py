"""Queries that must hold at scale, on a corpus bulk-loaded through corpus/ (binary COPY):
a date window that is a small share of the corpus still fills k results, the binary-quantized
index finds what exact search finds, and the chunk index can be dropped and rebuilt."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from corpus import chunk_index, papers
from corpus.db import Database
from corpus.models import PaperMeta

DIM = 384
OLD = datetime(2019, 5, 1, tzinfo=UTC)
NEW = datetime(2026, 11, 1, tzinfo=UTC)


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture
def skewed(db: Database) -> tuple[Database, np.ndarray]:
    """300 old papers close to the query (8 chunks each) and 8 recent ones far from it: every
    paper and chunk an unfiltered search returns is old."""
    rng = np.random.default_rng(3)
    query = _unit(rng.normal(size=DIM))
    far = _unit(rng.normal(size=DIM))
    rows, chunks = [], []
    for i in range(308):
        recent = i >= 300
        centre = far if recent else query
        vectors = _unit(centre + rng.normal(0, 0.06, (9, DIM)))
        meta = PaperMeta(
            paper_id=f"{'2611' if recent else '1905'}.{i:05d}",
            title=f"paper {i}",
            abstract="about something",
            authors=["A. Author"],
            categories=["cs.LG"],
            primary_category="cs.LG",
            published=NEW if recent else OLD,
        )
        rows.append(
            papers.BulkPaper(meta=meta, title=meta.title or "", source="arxiv", n_chunks=8, vector=vectors[0])
        )
        chunks += [
            (meta.paper_id, s, 1, None, papers.pack_text(f"chunk {s} of {i}"), vectors[s + 1])
            for s in range(8)
        ]
    with db.connect(autocommit=True) as conn:
        with conn.transaction():
            assert papers.copy_papers(conn, rows) == 308
            assert papers.copy_chunks(conn, chunks) == 308 * 8
        assert papers.fill_lexical_index(conn) == 308
        papers.analyze(conn)
    return db, query


def test_a_small_recent_window_still_returns_k_recent_papers(skewed: tuple[Database, np.ndarray]) -> None:
    db, query = skewed
    since = datetime(2026, 10, 1, tzinfo=UTC)
    with db.connect() as conn:
        unfiltered = papers.related_papers(conn, query, k=60)
        assert all(p.published == OLD for p, _ in unfiltered)  # a pool filtered afterwards would be empty
        dense = papers.related_papers(conn, query, k=5, since=since)
        hybrid = papers.related_papers(conn, query, k=5, since=since, lexical_text="something")
    for found in (dense, hybrid):
        assert len(found) == 5
        assert all(p.published == NEW and p.paper_id.startswith("2611.") for p, _ in found)


def test_the_binary_index_finds_what_exact_search_finds(skewed: tuple[Database, np.ndarray]) -> None:
    db, query = skewed
    # Ten chunks plainly nearest to the query, among 2,400 that are all at about the same distance
    # (where sign bits cannot rank, and the re-ranking by halfvec decides among the candidates).
    near = _unit(query + np.random.default_rng(4).normal(0, 0.005, (10, DIM)))
    meta = PaperMeta(paper_id="2611.99999", title="planted", published=NEW)
    with db.connect(autocommit=True) as conn:
        with conn.transaction():
            papers.copy_papers(
                conn, [papers.BulkPaper(meta=meta, title="planted", source="arxiv", vector=near[0])]
            )
            papers.copy_chunks(
                conn, [(meta.paper_id, s, 1, None, papers.pack_text("x"), near[s]) for s in range(10)]
            )
        seconds = chunk_index.build_chunk_index(conn, 256, binary=True)
        assert seconds >= 0 and chunk_index.BINARY_INDEX in chunk_index.index_bytes(conn)
        exact = papers.exact_nearest_chunks(conn, query, 10)
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN SELECT paper_id FROM chunks ORDER BY binary_quantize(embedding)::bit(384)"
                " <~> binary_quantize(%s::halfvec)::bit(384) LIMIT 10",
                (papers.to_pgvector_text(query),),
            )
        )
        found = papers.search_chunks_binary(conn, query, k=10, candidates=200)
    assert chunk_index.BINARY_INDEX in plan
    assert len(found) == 10
    assert [d for _, _, d in found] == sorted(d for _, _, d in found)  # re-ranked by the halfvec distance
    assert {(p, s) for p, s, _ in found} == set(exact) == {("2611.99999", s) for s in range(10)}


def test_the_chunk_index_is_dropped_and_rebuilt(skewed: tuple[Database, np.ndarray]) -> None:
    db, query = skewed
    with db.connect(autocommit=True) as conn:
        assert chunk_index.chunk_index_exists(conn)
        before = [(h.paper_id, h.seq) for h in papers.search_chunks(conn, query, k=5)]
        chunk_index.drop_chunk_index(conn)
        assert not chunk_index.chunk_index_exists(conn)
        assert [
            (h.paper_id, h.seq) for h in papers.search_chunks(conn, query, k=5)
        ] == papers.exact_nearest_chunks(conn, query, 5)  # without the index: exact scans, same answers
        chunk_index.build_chunk_index(conn, 256)
        assert chunk_index.chunk_index_exists(conn)
        assert chunk_index.chunk_count(conn) == 308 * 8
        after = [(h.paper_id, h.seq) for h in papers.search_chunks(conn, query, k=5)]
    assert len(set(before) & set(after)) >= 4


def test_dropping_the_index_gives_way_to_a_running_search(skewed: tuple[Database, np.ndarray]) -> None:
    db, query = skewed
    with db.connect() as reader, db.connect(autocommit=True) as loader:
        papers.search_chunks(reader, query, k=3)  # its transaction stays open, holding its lock
        assert chunk_index.drop_chunk_index(loader, lock_timeout_s=0.2) is False
        assert chunk_index.chunk_index_exists(loader)
        reader.rollback()
        assert chunk_index.drop_chunk_index(loader, lock_timeout_s=0.2) is True
        assert not chunk_index.chunk_index_exists(loader)
