"""Papers whose stored text an older extraction made are read again: by the next ingest of their
folder, and by `chatpapers db refresh` (from their file, or from arXiv when fetched from there)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg

from corpus import ingest_state, papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.models import PaperMeta
from ground.settings import Settings
from ingest.arxiv_api import ArxivClient
from ingest.pipeline import IngestPipeline
from ingest.prepare import TEXT_VERSION
from ingest.reextract import older_papers, reextract
from ingest.runs import ingest_category
from ingest.skips import skip_reason
from ingest.sources import WorkItem, pdf_dir_items
from tests.conftest import cli_env, pick_papers, run_cli, subset_folder
from tests.fake_arxiv import FakeArxiv

NAMES = ["1706.03762v5.pdf", "1512.03385v1.pdf"]


def _as_an_older_extraction_left_it(db: Database, paper_id: str) -> int:
    """What a database of an older release holds: no text version, and (to see the text come
    back) only the paper's first chunk. Returns the number of chunks it had."""
    with db.connect(autocommit=True) as conn:
        had = conn.execute("SELECT n_chunks FROM papers WHERE paper_id = %s", (paper_id,)).fetchone()[0]
        conn.execute("UPDATE ingest_items SET text_version = NULL WHERE paper_id = %s", (paper_id,))
        conn.execute("DELETE FROM chunks WHERE paper_id = %s AND seq > 0", (paper_id,))
        conn.execute("UPDATE papers SET n_chunks = 1 WHERE paper_id = %s", (paper_id,))
    return had


def _stored(db: Database, paper_id: str) -> tuple[int, int, int | None, str, str]:
    """Chunks stored, n_chunks, text version, title, source."""
    with db.connect(autocommit=True) as conn:
        return conn.execute(
            "SELECT (SELECT count(*) FROM chunks c WHERE c.paper_id = p.paper_id), p.n_chunks,"
            " i.text_version, p.title, i.source FROM papers p JOIN ingest_items i USING (paper_id)"
            " WHERE p.paper_id = %s",
            (paper_id,),
        ).fetchone()


def test_refresh_reads_the_text_of_older_papers_again_from_their_files(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    folder, metadata = subset_folder(tmp_path / "pdfs", NAMES)
    assert IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata)).new == 2
    assert older_papers(db) == []  # an ingest of this release stores its text version
    had = _as_an_older_extraction_left_it(db, "1706.03762")
    assert [p.paper_id for p in older_papers(db)] == ["1706.03762"]

    preview = reextract(settings, db, embedder, dry_run=True)
    assert (preview.older, preview.reread) == (1, 0) and _stored(db, "1706.03762")[0] == 1

    report = reextract(settings, db, embedder)
    assert (report.older, report.reread, report.missing, report.failed) == (1, 1, [], [])
    assert _stored(db, "1706.03762") == (had, had, TEXT_VERSION, "Attention Is All You Need", "pdf-dir")
    assert older_papers(db) == [] and reextract(settings, db, embedder).older == 0


def test_the_next_ingest_of_the_folder_reads_an_older_paper_again_and_only_that_one(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    folder, metadata = subset_folder(tmp_path / "pdfs", NAMES)
    IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata))
    had = _as_an_older_extraction_left_it(db, "1512.03385")
    again = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata))
    assert (again.new, again.updated, again.skip_reasons) == (0, 1, {"unchanged": 1})
    assert _stored(db, "1512.03385")[:3] == (had, had, TEXT_VERSION)
    third = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata))
    assert (third.new, third.updated, third.skip_reasons) == (0, 0, {"unchanged": 2})


def test_a_paper_fetched_from_arxiv_is_fetched_again_and_left_alone_offline(
    db: Database, settings: Settings, embedder: Embedder, fake_arxiv: FakeArxiv
) -> None:
    fake_arxiv.reset(pick_papers(fake_arxiv, ["1212.5701"]))
    client = ArxivClient(settings)
    try:
        ingest_category(IngestPipeline(settings, db, embedder), client, db, "cs")
    finally:
        client.close()
    had = _as_an_older_extraction_left_it(db, "1212.5701")
    title = _stored(db, "1212.5701")[3]

    # never downloaded again unless asked: a whole corpus at arXiv's pace takes days
    fake_arxiv.requests.clear()
    unasked = reextract(settings, db, embedder)
    assert (unasked.on_arxiv, unasked.reread, fake_arxiv.requests) == (1, 0, [])

    offline = settings.model_copy(update={"arxiv_pdf_url": "http://127.0.0.1:9/pdf"})
    report = reextract(offline, db, embedder, refetch=True)
    assert report.missing == ["1212.5701"] and report.arxiv.startswith("unreachable")
    # the stored paper is as it was, not recorded as failed: the next refresh tries again
    assert _stored(db, "1212.5701")[:3] == (1, 1, None)
    assert [p.paper_id for p in older_papers(db)] == ["1212.5701"]

    fake_arxiv.requests.clear()
    report = reextract(settings, db, embedder, refetch=True)
    assert (report.reread, report.arxiv) == (1, "PDFs fetched again")
    assert [r for r in fake_arxiv.requests if r.startswith("/pdf/")] == ["/pdf/1212.5701v1"]
    assert _stored(db, "1212.5701") == (had, had, TEXT_VERSION, title, "arxiv")


def test_status_names_older_text_and_refresh_reads_it_again_from_the_command_line(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    folder, metadata = subset_folder(tmp_path / "pdfs", NAMES[:1])
    IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata))
    had = _as_an_older_extraction_left_it(db, "1706.03762")
    env = cli_env(settings)
    status = run_cli(env, "db", "status")
    assert status.returncode == 0, status.stderr
    assert "older text 1 papers hold text an older extraction made" in " ".join(status.stdout.split())
    done = run_cli(env, "db", "refresh", "--no-arxiv", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "text read again for 1 of 1 papers an older extraction read" in " ".join(done.stdout.split())
    assert json.loads(run_cli(env, "db", "status", "--json").stdout)["older_text"] == 0
    with psycopg.connect(settings.database_url) as conn:
        assert conn.execute("SELECT count(*) FROM chunks WHERE paper_id = '1706.03762'").fetchone()[0] == had


def test_read_again_from_a_folder_without_metadata_a_paper_keeps_its_description_and_version(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    folder, metadata = subset_folder(tmp_path / "pdfs", NAMES[:1])
    IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata))
    with db.connect(autocommit=True) as conn:
        before = papers.get_paper(conn, "1706.03762")
    _as_an_older_extraction_left_it(db, "1706.03762")
    again = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder))  # no metadata this time
    assert again.updated == 1
    with db.connect(autocommit=True) as conn:
        after = papers.get_paper(conn, "1706.03762")
    assert before is not None and after is not None
    assert (after.title, after.authors, after.abstract, after.categories, after.version) == (
        before.title,
        before.authors,
        before.abstract,
        before.categories,
        before.version,
    )
    # an older version's file is no better text: v1 in a folder, v5 stored
    older = ingest_state.ItemState(paper_id="1706.03762", version=5, source_sha256="a", status="ok",
                                   reason=None, retryable=False, text_version=None)  # fmt: skip
    assert skip_reason(older, 1, "b") == "same version" and skip_reason(older, 5, "a") is None


def test_a_file_that_changed_or_now_fails_leaves_the_stored_paper_as_it_was(
    db: Database, settings: Settings, embedder: Embedder, corpus_dir: Path, tmp_path: Path
) -> None:
    _links, metadata = subset_folder(tmp_path / "links", NAMES[:1])
    folder = tmp_path / "pdfs"
    folder.mkdir()
    stored = folder / NAMES[0]
    shutil.copy(corpus_dir / "pdfs" / NAMES[0], stored)  # a file of its own, not a link into the corpus
    IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata))
    _as_an_older_extraction_left_it(db, "1706.03762")
    shutil.copy(corpus_dir / "pdfs" / NAMES[1], stored)  # another paper where this one's file was
    report = reextract(settings, db, embedder)
    assert (report.reread, report.missing) == (0, ["1706.03762"])
    assert _stored(db, "1706.03762")[:3] == (1, 1, None)

    # the same paper's bytes that no longer read (a pipeline told to keep what is stored)
    broken = (corpus_dir / "edge" / "not-a-pdf__git-symlink-stub.pdf").read_bytes()
    item = WorkItem(meta=PaperMeta(paper_id="1706.03762", version=5), source="pdf-dir", location=str(stored),
                    fetch=lambda: broken)  # fmt: skip
    kept = IngestPipeline(settings, db, embedder, keep_stored=True).run([item])
    assert [f.paper_id for f in kept.failed] == ["1706.03762"]
    with db.connect(autocommit=True) as conn:
        state = ingest_state.get_item(conn, "1706.03762")
    assert state is not None and state.status == "ok" and _stored(db, "1706.03762")[:2] == (1, 1)
