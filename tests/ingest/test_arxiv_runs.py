"""`chatpapers ingest --category` end to end: local fake arXiv, real PDFs, real PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from datetime import timedelta

import psycopg
import pytest

from corpus import ingest_state
from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest.arxiv_api import ArxivClient
from ingest.pipeline import IngestPipeline
from ingest.runs import ingest_category
from tests.conftest import chatpapers_exe, cli_env, pick_papers, run_cli
from tests.fake_arxiv import CORPUS, FakeArxiv, FakePaper

SMALL_CS = ["2304.02623", "1609.09430", "1212.5701", "1608.03417"]
NON_CS = ["0908.0054"]


def _run(settings: Settings, db: Database, embedder: Embedder, category: str = "cs", **kw):
    client = ArxivClient(settings)
    try:
        return ingest_category(IngestPipeline(settings, db, embedder), client, db, category, **kw)
    finally:
        client.close()


def _consistent(conn: psycopg.Connection) -> None:
    """Every stored paper is whole: n_chunks matches its chunks, numbered 0..n-1."""
    rows = conn.execute(
        "SELECT p.paper_id, p.n_chunks, count(c.seq), coalesce(max(c.seq), -1)"
        " FROM papers p LEFT JOIN chunks c USING (paper_id) GROUP BY p.paper_id, p.n_chunks"
    ).fetchall()
    for paper_id, n_chunks, count, max_seq in rows:
        assert n_chunks == count == max_seq + 1, paper_id


def test_category_run_through_the_cli(settings: Settings, fake_arxiv: FakeArxiv) -> None:
    fake_arxiv.reset(pick_papers(fake_arxiv, SMALL_CS + NON_CS))
    env = cli_env(settings)
    done = run_cli(env, "ingest", "--category", "cs", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "first run for cs" in done.stderr
    status = run_cli(env, "db", "status", "--json")
    report = json.loads(status.stdout)
    assert report["papers"] == len(SMALL_CS) and report["failed"] == 0
    assert report["chunks"] > 20
    newest = max(p.updated for p in fake_arxiv.papers if p.paper_id in SMALL_CS)
    assert report["watermarks"]["cs"].startswith(newest.strftime("%Y-%m-%d"))
    pdfs = [r for r in fake_arxiv.requests if r.startswith("/pdf/")]
    assert sorted(pdfs) == sorted(f"/pdf/{p.paper_id}v{p.version}" for p in pick_papers(fake_arxiv, SMALL_CS))
    with psycopg.connect(settings.database_url) as conn:
        _consistent(conn)
        row = conn.execute(
            "SELECT title, authors, categories, pdf_url, version FROM papers WHERE paper_id = '1212.5701'"
        ).fetchone()
    assert row[0] == "ADADELTA: An Adaptive Learning Rate Method" and row[1] == ["Matthew D. Zeiler"]
    assert row[2] == ["cs.LG"] and row[3] == "https://arxiv.org/pdf/1212.5701v1" and row[4] == 1


def test_second_run_adds_nothing_and_embeds_nothing(
    settings: Settings, db: Database, fake_arxiv: FakeArxiv, embedder: Embedder
) -> None:
    fake_arxiv.reset(pick_papers(fake_arxiv, SMALL_CS[:2]))
    first = _run(settings, db, embedder)
    assert first.new == 2
    embedded, requests = embedder.texts_embedded, len(fake_arxiv.requests)
    second = _run(settings, db, embedder)
    assert (second.new, second.updated, second.chunks) == (0, 0, 0)
    assert embedder.texts_embedded == embedded
    # one API page to see that the newest paper is at the watermark, no PDF downloads
    assert fake_arxiv.requests[requests:] and all(
        r.startswith("/api/") for r in fake_arxiv.requests[requests:]
    )
    # --since ignores the watermark but still skips stored versions
    since = _run(settings, db, embedder, since=min(p.updated for p in fake_arxiv.papers) - timedelta(days=1))
    assert since.skipped == 2 and since.new == 0 and embedder.texts_embedded == embedded


def test_new_version_replaces_old_chunks(
    settings: Settings, db: Database, fake_arxiv: FakeArxiv, embedder: Embedder
) -> None:
    v1 = FakePaper(
        paper_id="2103.15348",
        version=1,
        title="LayoutParser",
        abstract="A toolkit for document image analysis.",
        authors=["Zejiang Shen"],
        categories=["cs.CV"],
        published=fake_arxiv.papers[0].updated,
        updated=fake_arxiv.papers[0].updated,
        pdf=CORPUS / "edge/excerpt__2103.15348v2__2pages.pdf",
    )
    fake_arxiv.reset([v1])
    assert _run(settings, db, embedder).new == 1
    with db.connect() as conn:
        old = conn.execute("SELECT page FROM chunks WHERE paper_id = '2103.15348' ORDER BY seq").fetchall()
    v2 = v1.__class__(
        **{
            **v1.__dict__,
            "version": 2,
            "updated": v1.updated + timedelta(days=30),
            "pdf": CORPUS / "edge/blankpages__2103.15348v2__4pages.pdf",
        }
    )
    fake_arxiv.publish(v2)
    report = _run(settings, db, embedder)
    assert report.updated == 1 and report.new == 0
    with db.connect() as conn:
        version, n_pages, published = conn.execute(
            "SELECT version, n_pages, published FROM papers WHERE paper_id = '2103.15348'"
        ).fetchone()
        new = conn.execute("SELECT page FROM chunks WHERE paper_id = '2103.15348' ORDER BY seq").fetchall()
        _consistent(conn)
    # v2 has blank pages inserted: the same words, now on other pages
    assert version == 2 and n_pages == 4 and new != old
    assert published == v1.published  # first-version date survives the update


def test_failed_write_leaves_the_old_version_intact(
    settings: Settings, db: Database, fake_arxiv: FakeArxiv, embedder: Embedder, monkeypatch
) -> None:
    paper = pick_papers(fake_arxiv, ["2304.02623"])[0]
    fake_arxiv.reset([paper])
    _run(settings, db, embedder)
    with db.connect() as conn:
        before = conn.execute("SELECT seq, text_z FROM chunks ORDER BY seq").fetchall()
    fake_arxiv.publish(
        paper.__class__(**{**paper.__dict__, "version": 2, "updated": paper.updated + timedelta(1)})
    )

    import corpus.papers as store

    calls = {"n": 0}
    real = store.to_pgvector_text

    def explode_mid_copy(vector):
        calls["n"] += 1
        if calls["n"] == 4:  # paper vector, two chunks, then the database is "gone"
            raise psycopg.OperationalError("connection lost")
        return real(vector)

    monkeypatch.setattr(store, "to_pgvector_text", explode_mid_copy)
    with pytest.raises(psycopg.OperationalError):
        _run(settings, db, embedder)
    with db.connect() as conn:
        after = conn.execute("SELECT seq, text_z FROM chunks ORDER BY seq").fetchall()
        version = conn.execute("SELECT version FROM papers").fetchone()[0]
    assert after == before and version == 1


def test_429_then_success(
    settings: Settings, db: Database, fake_arxiv: FakeArxiv, embedder: Embedder
) -> None:
    fake_arxiv.reset(pick_papers(fake_arxiv, ["2304.02623"]))
    fake_arxiv.fail_next = [(429, {"Retry-After": "0"}), (429, {"Retry-After": "0"})]
    report = _run(settings, db, embedder)
    assert report.new == 1 and not report.failed
    assert len(fake_arxiv.requests) == 4  # two refusals, the feed page, the PDF


def test_failed_download_is_retried_next_run(
    settings: Settings, db: Database, fake_arxiv: FakeArxiv, embedder: Embedder
) -> None:
    papers = pick_papers(fake_arxiv, ["2304.02623", "1609.09430"])
    fake_arxiv.reset(papers)
    newest = max(papers, key=lambda p: p.updated)
    oldest = min(papers, key=lambda p: p.updated)
    fake_arxiv.pdf_overrides[f"{newest.paper_id}v{newest.version}"] = CORPUS / "does-not-exist.pdf"
    first = _run(settings, db, embedder)
    assert [f.paper_id for f in first.failed] == [newest.paper_id] and first.failed[0].retryable
    assert first.new == 1
    with db.connect() as conn:
        mark = ingest_state.get_watermark(conn, "cs")
    assert mark is not None and oldest.updated <= mark < newest.updated
    fake_arxiv.pdf_overrides.clear()
    seen = len(fake_arxiv.requests)
    second = _run(settings, db, embedder)
    assert second.new == 1 and not second.failed
    pdfs = [r for r in fake_arxiv.requests[seen:] if r.startswith("/pdf/")]
    assert pdfs == [f"/pdf/{newest.paper_id}v{newest.version}"]  # the walk stopped above the stored one


def test_empty_category_is_not_an_error(
    settings: Settings, db: Database, fake_arxiv: FakeArxiv, embedder: Embedder
) -> None:
    messages: list[str] = []
    client = ArxivClient(settings)
    report = ingest_category(
        IngestPipeline(settings, db, embedder), client, db, "cs.XX", max_results=5, notify=messages.append
    )
    assert report.new == 0 and not report.failed and messages == ["cs.XX: no new papers"]


def test_arxiv_400_and_unreachable_db_are_clear_messages(settings: Settings, fake_arxiv: FakeArxiv) -> None:
    body = (CORPUS / "atom/arxivpy2026_id_abc_s0_m100_b79c8dcf6bc3.xml").read_bytes()
    fake_arxiv.fail_next = [(400, {}, body)]
    done = subprocess.run(
        [chatpapers_exe(), "ingest", "-c", "cs", "--max-results", "1", "--no-progress"],
        env=cli_env(settings),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert "arXiv rejected the query: incorrect id format for abc (HTTP 400)" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
