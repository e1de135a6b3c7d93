"""`--engine ray`: the same input gives the same rows as the in-process pipeline (chunk texts,
vectors, failure records), on a local Ray cluster of 2 CPUs, against the real database; reruns
skip; without Ray the CLI says how to install it in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from psycopg.conninfo import make_conninfo

from corpus.db import Database, ensure_database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items
from tests.conftest import cli_env, make_settings, subset_folder

PAPERS = ["1212.5701v1.pdf", "2304.02623v1.pdf", "1608.03417v1.pdf"]
EDGE = ["not-a-pdf__git-symlink-stub.pdf", "imageonly__nonarxiv__docling-ocr-test.pdf"]


@pytest.fixture
def second_db(pg_admin_url: str, template_db: str, tmp_path: Path) -> Iterator[Database]:
    name = f"ray_{os.getpid()}_{tmp_path.name[-12:].replace('-', '_').lower()}"
    ensure_database(pg_admin_url, name, template=template_db)
    database = Database(make_settings(make_conninfo(pg_admin_url, dbname=name), tmp_path / "data-ray"))
    yield database
    database.close()


def _rows(db: Database) -> tuple[list, list, dict[tuple[str, int], np.ndarray]]:
    with db.connect() as conn:
        items = conn.execute(
            "SELECT paper_id, version, status, reason, retryable, source_sha256, n_chunks FROM ingest_items"
            " ORDER BY paper_id"
        ).fetchall()
        stored = conn.execute(
            "SELECT paper_id, title, abstract, n_pages, n_chunks, embedding FROM papers ORDER BY paper_id"
        ).fetchall()
        chunks = conn.execute(
            "SELECT paper_id, seq, page, char_start, text_z, embedding FROM chunks"
        ).fetchall()
    paper_rows = [(*r[:5], r[5].to_numpy()) for r in stored]
    chunk_rows = {(r[0], r[1]): (r[2], r[3], bytes(r[4]), r[5].to_numpy()) for r in chunks}
    return items, paper_rows, chunk_rows


@pytest.mark.parametrize("actors", [None, 2], ids=["one-actor", "two-actors"])
def test_ray_engine_stores_what_the_in_process_pipeline_stores(
    actors: int | None,
    settings: Settings,
    db: Database,
    second_db: Database,
    embedder: Embedder,
    corpus_dir: Path,
    tmp_path: Path,
) -> None:
    # no skip without Ray: scripts/setup.sh installs it, and CI must run this
    from ingest.ray_engine import RayIngestPipeline

    folder, meta = subset_folder(tmp_path / "pdfs", PAPERS)
    for name in EDGE:
        (folder / name).symlink_to(corpus_dir / "edge" / name)

    local = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, meta))
    threads = 1 if actors else None  # two actors: a core each
    with RayIngestPipeline(
        second_db.settings, second_db, embedder, num_cpus=2, embed_actors=actors, embed_threads=threads
    ) as pipeline:
        import ray

        assert ray.cluster_resources()["CPU"] == 2  # the local cluster this engine started
        before = embedder.texts_embedded
        remote = pipeline.run(pdf_dir_items(folder, meta))
        embedded = embedder.texts_embedded
        per_actor = pipeline.texts_per_actor()
        again = pipeline.run(pdf_dir_items(folder, meta))
    assert not ray.is_initialized()  # shut down with the engine that started it

    assert (remote.new, remote.empty, len(remote.failed), remote.chunks) == (
        local.new,
        local.empty,
        len(local.failed),
        local.chunks,
    )
    assert (remote.new, remote.empty, len(remote.failed)) == (3, 1, 1)
    assert (again.new, again.skipped, embedder.texts_embedded) == (0, 5, embedded)
    # no GPU here: one actor by default; two when asked, both embedding a share of every group
    assert len(per_actor) == (actors or 1) and sum(per_actor) == embedded - before
    assert min(per_actor) > 0

    items_local, papers_local, chunks_local = _rows(db)
    items_ray, papers_ray, chunks_ray = _rows(second_db)
    assert items_ray == items_local  # same statuses, reasons, hashes, chunk counts
    assert [p[:5] for p in papers_ray] == [p[:5] for p in papers_local]
    for a, b in zip(papers_ray, papers_local, strict=True):
        assert np.abs(a[5] - b[5]).max() < 1e-3
    assert chunks_ray.keys() == chunks_local.keys() and len(chunks_ray) == local.chunks
    for key, (page, start, text, vector) in chunks_ray.items():
        assert (page, start, text) == chunks_local[key][:3]  # the same texts, in the same places
        assert np.abs(vector - chunks_local[key][3]).max() < 1e-3


def test_without_ray_the_cli_says_how_to_install_it(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    program = (
        "import sys; sys.modules['ray'] = None; from chatpapers.cli import main; "  # as if not installed
        f"sys.argv = ['chatpapers', 'ingest', '--pdf-dir', {str(folder)!r}, '--engine', 'ray']; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], env=cli_env(settings), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: --engine ray needs Ray: pip install 'chatpapers[ray]' (or: pip install 'ray[data]==2.60.0')"
    ]


def test_texts_are_split_across_the_actors_evenly_and_in_order() -> None:
    from ingest.ray_engine import split_evenly

    assert split_evenly(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert split_evenly(2, 4) == [(0, 1), (1, 2)]  # no actor gets an empty slice
    assert split_evenly(5, 1) == [(0, 5)]
    assert split_evenly(0, 3) == [(0, 0)]  # nothing to embed: one call with no texts
    for n in range(1, 40):
        for parts in range(1, 6):
            bounds = split_evenly(n, parts)
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            assert all(a[1] == b[0] for a, b in pairwise(bounds))
            sizes = [j - i for i, j in bounds]
            assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_embed_actors_goes_with_the_ray_engine(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    program = (
        "import sys; from chatpapers.cli import main; "
        f"sys.argv = ['chatpapers', 'ingest', '--pdf-dir', {str(folder)!r}, '--embed-actors', '2']; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], env=cli_env(settings), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "--embed-actors goes with --engine ray" in done.stderr
    assert "Traceback" not in done.stderr
