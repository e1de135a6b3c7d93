"""Bulk loads drop the chunk HNSW index and build it after loading; an interrupted one leaves a
correct corpus without it, and the next run builds it. Small runs keep the index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from corpus import chunk_index, papers
from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest import bulk
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items
from tests.conftest import cli_env, run_cli, subset_folder

BATCH = ["1212.5701v1.pdf", "1503.02531v1.pdf", "2304.02623v1.pdf", "1608.03417v1.pdf"]


def _bulk(settings: Settings, **overrides: object) -> Settings:
    return settings.model_copy(
        update={"bulk_index_min_papers": 2, "bulk_index_rebuild_ratio": 0.5, **overrides}
    )


def _check_search(db: Database, embedder: Embedder) -> None:
    """The nearest chunks of some passages: the passage itself first, and the index's answer the
    exact scan's (a small corpus: the HNSW graph finds every neighbour)."""
    with db.connect(autocommit=True) as conn:
        texts = papers.chunk_texts(conn)
        picked = texts[:: max(1, len(texts) // 5)][:5]
        for (paper_id, seq, _), vector in zip(picked, embedder.embed([t for _, _, t in picked]), strict=True):
            hits = papers.search_chunks(conn, vector, k=5)
            assert (hits[0].paper_id, hits[0].seq) == (paper_id, seq)
            assert [(h.paper_id, h.seq) for h in hits] == papers.exact_nearest_chunks(conn, vector, 5)


def _uses_index(db: Database, embedder: Embedder) -> bool:
    with db.connect(autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT seq FROM chunks ORDER BY embedding <=> %s::halfvec LIMIT 5",
            ("[" + ",".join(["0.05"] * 384) + "]",),
        ).fetchall()
    return any(chunk_index.CHUNK_INDEX in row[0] for row in plan)


def test_a_bulk_run_drops_and_builds_the_index(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path
) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", BATCH)
    messages: list[str] = []
    during: list[bool] = []
    bulk_settings = _bulk(settings, index_m=12, index_ef_construction=48)
    pipeline = IngestPipeline(bulk_settings, db, embedder, notify=messages.append)

    original = pipeline.embed

    def embed_and_look(texts: list[str]) -> np.ndarray:
        with db.connect(autocommit=True) as conn:
            during.append(chunk_index.chunk_index_exists(conn))
            during.append(chunk_index.claim_index_work(conn))  # held by the bulk load: False
        return original(texts)

    pipeline.embed = embed_and_look  # type: ignore[method-assign]
    report = pipeline.run(pdf_dir_items(folder, meta))
    assert report.new == 4 and report.index is not None
    assert report.index.rebuild and report.index.pending == 4 and report.index.build_seconds is not None
    assert during and not any(during)  # no index while loading
    assert "dropped and built again after loading" in messages[0]
    with db.connect(autocommit=True) as conn:
        assert chunk_index.index_parameters(conn) == (12, 48)  # built as the settings ask
    assert _uses_index(db, embedder)
    _check_search(db, embedder)


def test_a_small_run_onto_a_large_corpus_keeps_the_index(
    corpus_copy: Database, embedder: Embedder, tmp_path: Path
) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", ["2202.00535v1.pdf", "1212.5701v1.pdf"])
    settings = _bulk(corpus_copy.settings)
    with corpus_copy.connect(autocommit=True) as conn:
        stored = papers.corpus_counts(conn)["chunks"]
        plan = bulk.plan_index(conn, settings, pdf_dir_items(folder, meta), None)
    # 1212.5701 is in the copied corpus already: one paper pending, far below half the corpus
    assert (plan.pending, plan.rebuild) == (1, False)
    assert 0 < plan.expected_chunks < 0.5 * stored
    report = IngestPipeline(settings, corpus_copy, embedder).run(pdf_dir_items(folder, meta))
    assert report.new == 1 and report.index is not None and report.index.build_seconds is None
    with corpus_copy.connect(autocommit=True) as conn:
        assert chunk_index.chunk_index_exists(conn)
    # a share of 0 makes any run of bulk_index_min_papers a bulk load
    with corpus_copy.connect(autocommit=True) as conn:
        assert bulk.plan_index(
            conn,
            _bulk(settings, bulk_index_rebuild_ratio=0.0, bulk_index_min_papers=1),
            pdf_dir_items(folder, meta),
            None,
            force=True,
        ).rebuild


def test_an_interrupted_bulk_run_leaves_a_correct_corpus_and_the_next_run_builds_the_index(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", BATCH)
    pipeline = IngestPipeline(_bulk(settings), db, embedder)
    calls = {"embed": 0}
    original = pipeline.embed

    def embed_then_stop(texts: list[str]) -> np.ndarray:
        calls["embed"] += 1
        if calls["embed"] > 1:
            raise KeyboardInterrupt  # Ctrl+C in the middle of the load
        return original(texts)

    def build_interrupted(conn, maintenance_work_mem_mb=None, **graph: int) -> float:
        raise KeyboardInterrupt  # ... and again while the index was being built

    pipeline.embed = embed_then_stop  # type: ignore[method-assign]
    monkeypatch.setattr(bulk.chunk_index, "build_chunk_index", build_interrupted)
    with pytest.raises(KeyboardInterrupt):
        pipeline.run(pdf_dir_items(folder, meta))
    monkeypatch.undo()

    with db.connect(autocommit=True) as conn:
        assert not chunk_index.chunk_index_exists(conn)
        done = {r[0] for r in conn.execute("SELECT paper_id FROM papers")}
        assert 1 <= len(done) < 4  # whole papers only, each with all of its chunks
        assert all(n == len(papers.chunk_texts(conn, pid)) for pid, n in papers.chunk_counts(conn))
    _check_search(db, embedder)  # right without the index, by exact scans

    # the rest is a small run: it builds the missing index first, then updates it row by row
    messages: list[str] = []
    report = IngestPipeline(
        _bulk(settings, bulk_index_min_papers=100), db, embedder, notify=messages.append
    ).run(pdf_dir_items(folder, meta))
    assert report.new == 4 - len(done) and report.skipped == len(done)
    assert report.index is not None and report.index.built_missing_seconds is not None
    assert any("missing" in m for m in messages)
    with db.connect(autocommit=True) as conn:
        assert chunk_index.chunk_index_exists(conn)
        assert papers.corpus_counts(conn)["papers"] == 4
    assert _uses_index(db, embedder)
    _check_search(db, embedder)


def test_an_interrupted_bulk_run_rerun_as_a_bulk_run_ends_with_the_index(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path
) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", BATCH)
    pipeline = IngestPipeline(_bulk(settings), db, embedder)
    original = pipeline.embed
    calls = {"embed": 0}

    def embed_then_fail(texts: list[str]) -> np.ndarray:
        calls["embed"] += 1
        if calls["embed"] > 1:
            raise RuntimeError("the embedder broke")
        return original(texts)

    pipeline.embed = embed_then_fail  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        pipeline.run(pdf_dir_items(folder, meta))
    with db.connect(autocommit=True) as conn:
        assert chunk_index.chunk_index_exists(conn)  # built in the `finally` of the failed load
        n_done = papers.corpus_counts(conn)["papers"]
    report = IngestPipeline(_bulk(settings), db, embedder).run(pdf_dir_items(folder, meta))
    assert report.new == 4 - n_done
    with db.connect(autocommit=True) as conn:
        assert chunk_index.chunk_index_exists(conn)
    _check_search(db, embedder)


def test_db_status_tells_a_missing_index_and_db_index_builds_it(settings: Settings, db: Database) -> None:
    with db.connect(autocommit=True) as conn:
        chunk_index.drop_chunk_index(conn)
    env = cli_env(settings)
    assert json.loads(run_cli(env, "db", "status", "--json").stdout)["chunk_index"] is False
    assert "chatpapers db index builds it" in run_cli(env, "db", "status").stdout
    built = run_cli(env, "db", "index")
    assert built.returncode == 0 and "chunk index built in" in built.stdout, built.stderr
    assert json.loads(run_cli(env, "db", "status", "--json").stdout)["chunk_index"] is True
    assert "is there" in run_cli(env, "db", "index").stdout


def test_db_index_rebuild_applies_the_graph_parameters_of_the_settings(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path
) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", BATCH[:2])
    IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, meta))
    with db.connect(autocommit=True) as conn:
        assert chunk_index.index_parameters(conn) == (16, 64)  # the migration's index: pgvector's
    env = cli_env(settings) | {"CHATPAPERS_INDEX_M": "8", "CHATPAPERS_INDEX_EF_CONSTRUCTION": "40"}
    status = run_cli(env, "db", "status")
    assert "m 16, ef_construction 64 (settings ask for m 8, ef_construction 40" in status.stdout
    assert "is there (m 16, ef_construction 64)" in run_cli(env, "db", "index").stdout
    rebuilt = run_cli(env, "db", "index", "--rebuild")
    assert rebuilt.returncode == 0 and "rebuilt in" in rebuilt.stdout, rebuilt.stderr
    with db.connect(autocommit=True) as conn:
        assert chunk_index.index_parameters(conn) == (8, 40)
        assert set(chunk_index.index_bytes(conn)) >= {chunk_index.CHUNK_INDEX}
        assert not any(name.endswith("_next") for name in chunk_index.index_bytes(conn))
    assert json.loads(run_cli(env, "db", "status", "--json").stdout)["chunk_index_parameters"] == {
        "m": 8,
        "ef_construction": 40,
    }
    assert _uses_index(db, embedder)
    _check_search(db, embedder)


def test_a_failed_rebuild_keeps_the_old_index_and_leaves_nothing(settings: Settings, db: Database) -> None:
    with db.connect(autocommit=True) as conn:
        with pytest.raises(Exception, match="ef_construction"):  # pgvector: at least 2 x m
            chunk_index.rebuild_chunk_index(conn, m=16, ef_construction=8)
        assert chunk_index.index_parameters(conn) == (16, 64)
        assert list(chunk_index.index_bytes(conn)).count(chunk_index.CHUNK_INDEX) == 1
        assert not any(name.endswith("_next") for name in chunk_index.index_bytes(conn))


def test_settings_refuse_an_ef_construction_below_twice_m(settings: Settings) -> None:
    with pytest.raises(ValueError, match="at least 2 x CHATPAPERS_INDEX_M"):
        Settings.model_validate(settings.model_dump() | {"index_m": 32, "index_ef_construction": 40})


def test_an_ingest_beside_a_bulk_load_neither_drops_nor_builds_the_index(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path
) -> None:
    """A bulk load holds the index-work lock from its drop to its build: a second run then loads
    beside it and leaves the index to it, and `db index` waits for it."""
    with db.connect(autocommit=True) as bulk_run:
        assert chunk_index.claim_index_work(bulk_run)
        folder, meta = subset_folder(tmp_path / "pdfs", BATCH[:2])
        messages: list[str] = []
        report = IngestPipeline(_bulk(settings), db, embedder, notify=messages.append).run(
            pdf_dir_items(folder, meta)
        )
        assert report.new == 2 and report.index is not None and not report.index.rebuild
        with db.connect(autocommit=True) as conn:
            assert chunk_index.chunk_index_exists(conn)  # a bulk-sized run, but the index is not its to drop
            chunk_index.drop_chunk_index(conn)  # as the bulk load holding the lock did
        folder, meta = subset_folder(tmp_path / "more", BATCH[2:])
        report = IngestPipeline(settings, db, embedder, notify=messages.append).run(
            pdf_dir_items(folder, meta)
        )
        assert report.new == 2 and report.index is not None and report.index.built_missing_seconds is None
        assert any("another ingest run or index build is under way" in m for m in messages), messages
        with db.connect(autocommit=True) as conn:
            assert not chunk_index.chunk_index_exists(conn)  # left to the bulk load
        refused = run_cli(cli_env(settings), "db", "index")
        assert refused.returncode == 1 and "try again after it" in refused.stderr, refused.stdout
    built = run_cli(cli_env(settings), "db", "index")  # the bulk load's session ended: its lock with it
    assert built.returncode == 0 and "chunk index built in" in built.stdout, built.stderr


def test_a_run_that_builds_nothing_lets_a_bulk_load_start_beside_it(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path
) -> None:
    folder, meta = subset_folder(tmp_path / "pdfs", BATCH[:1])
    pipeline = IngestPipeline(settings, db, embedder)
    original = pipeline.embed
    claims: list[bool] = []

    def embed_and_claim(texts: list[str]) -> np.ndarray:
        with db.connect(autocommit=True) as other:
            claims.append(chunk_index.claim_index_work(other))
        return original(texts)

    pipeline.embed = embed_and_claim  # type: ignore[method-assign]
    report = pipeline.run(pdf_dir_items(folder, meta))
    assert report.new == 1 and report.index is not None and not report.index.rebuild
    assert claims and all(claims)
