"""The two chunk layouts bench/scale.py measures against today's table (corpus/chunk_layouts.py):
both answer what the chunks table answers, and a date window returns k rows of that window even
when it holds a small share of the corpus, far from the query."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import pytest

from corpus import chunk_layouts, papers
from corpus.db import Database
from corpus.models import PaperMeta

DIM = 384
TODAY = datetime(2026, 11, 24, 12, tzinfo=UTC)


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture
def layouts(db: Database) -> tuple[Database, np.ndarray, dict[tuple[str, int], np.ndarray]]:
    """120 papers over 2015-2026 (6 chunks each), those of 2026-09 and later far from the query,
    both layouts copied from them and indexed."""
    rng = np.random.default_rng(11)
    query = _unit(rng.normal(size=DIM))
    far = _unit(rng.normal(size=DIM))
    rows, chunks, vectors_of = [], [], {}
    for i in range(120):
        published = datetime(2015 + i // 10, 1 + i % 10, 3, tzinfo=UTC)
        recent = published >= datetime(2026, 9, 1, tzinfo=UTC)
        vectors = _unit((far if recent else query) + rng.normal(0, 0.08, (7, DIM)))
        meta = PaperMeta(paper_id=f"{published:%y%m}.{i:05d}", title=f"paper {i}", published=published)
        rows.append(
            papers.BulkPaper(meta=meta, title=meta.title or "", source="arxiv", n_chunks=6, vector=vectors[0])
        )
        for s in range(6):
            chunks.append((meta.paper_id, s, 1, None, papers.pack_text(f"chunk {s} of {i}"), vectors[s + 1]))
            vectors_of[(meta.paper_id, s)] = vectors[s + 1]
    with db.connect(autocommit=True) as conn:
        with conn.transaction():
            papers.copy_papers(conn, rows)
            papers.copy_chunks(conn, chunks)
        months = chunk_layouts.create_layouts(conn, date(2015, 1, 1), TODAY.date())
        assert months == 12 * 11 + 11
        for table in chunk_layouts.LAYOUTS:
            assert chunk_layouts.copy_from_chunks(conn, table) == 720
            assert chunk_layouts.build_index(conn, table, 16, 64, None) >= 0
    return db, query, vectors_of


def _exact(query: np.ndarray, vectors_of: dict, keep=lambda key: True, k: int = 10) -> list[tuple[str, int]]:
    keys = [key for key in vectors_of if keep(key)]
    sims = np.asarray([float(query @ vectors_of[key].astype(np.float16).astype(np.float32)) for key in keys])
    return [keys[i] for i in np.argsort(-sims)[:k]]


def test_both_layouts_find_the_nearest_chunks_with_and_without_a_date_window(layouts) -> None:
    db, query, vectors_of = layouts
    since = datetime(2026, 9, 1, tzinfo=UTC)
    recent_ids = {key for key in vectors_of if key[0].startswith(("2609.", "2610."))}
    want_all = set(_exact(query, vectors_of))
    want_recent = set(_exact(query, vectors_of, lambda key: key in recent_ids))
    assert len(recent_ids) == 12 and not want_all & recent_ids  # the window is far from the query
    with db.connect(autocommit=True) as conn:
        for table in chunk_layouts.LAYOUTS:
            found = chunk_layouts.nearest(conn, table, query, 10)
            assert {(p, s) for p, s, _ in found} == want_all, table
            assert [x for *_, x in found] == sorted((x for *_, x in found), reverse=True)
            recent = chunk_layouts.nearest(conn, table, query, 10, since=since)
            assert {(p, s) for p, s, _ in recent} == want_recent, table


def test_an_increment_dated_today_is_found_in_both_layouts(layouts) -> None:
    db, query, _ = layouts
    planted = _unit(query + np.random.default_rng(5).normal(0, 0.01, (3, DIM)))
    with db.connect(autocommit=True) as conn:
        before = {t: sum(chunk_layouts.table_bytes(conn, t)) for t in chunk_layouts.LAYOUTS}
        assert all(before.values())
        for table in chunk_layouts.LAYOUTS:
            with conn.transaction():
                chunk_layouts.add_paper_chunks(conn, table, "2611.99999", TODAY, planted)
            found = chunk_layouts.nearest(conn, table, query, 3, since=TODAY)
            assert sorted((p, s) for p, s, _ in found) == [("2611.99999", s) for s in range(3)], table
        chunk_layouts.drop_layouts(conn)
        with pytest.raises(ValueError):
            chunk_layouts.nearest(conn, "chunks; DROP TABLE papers", query, 3)
