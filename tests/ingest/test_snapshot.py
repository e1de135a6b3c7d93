"""Metadata backfill from the real Kaggle snapshot lines."""

from pathlib import Path

from corpus.db import Database
from corpus.embedder import Embedder
from ingest.snapshot import backfill_snapshot, snapshot_records


def test_snapshot_records_parse(corpus_dir: Path) -> None:
    records = [r for r in snapshot_records(corpus_dir / "kaggle/arxiv-metadata-oai-snapshot.head.jsonl") if r]
    assert len(records) == 200
    first = records[1]  # 0704.0002, math.CO cs.CG, two versions
    assert (first.paper_id, first.version, first.categories) == ("0704.0002", 2, ["math.CO", "cs.CG"])
    assert first.published and first.updated and first.published < first.updated
    assert first.title == "Sparsity-certifying Graph Decompositions"
    assert first.authors == ["Ileana Streinu", "Louis Theran"]


def test_backfill_cs_only_and_idempotent(db: Database, embedder: Embedder, corpus_dir: Path) -> None:
    path = corpus_dir / "kaggle/arxiv-metadata-oai-snapshot.head.jsonl"
    report = backfill_snapshot(db, embedder, path, categories=("cs",))
    assert report.added > 0 and report.added + report.outside_category == 200 and report.invalid == 0
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT categories, n_chunks, source, embedding IS NOT NULL FROM papers"
        ).fetchall()
    assert len(rows) == report.added
    assert all(any(c.startswith("cs.") for c in cats) for cats, *_ in rows)
    assert all(n == 0 and src == "snapshot" and has_vec for _, n, src, has_vec in rows)
    again = backfill_snapshot(db, embedder, path, categories=("cs",))
    assert again.added == 0 and again.skipped == report.added
