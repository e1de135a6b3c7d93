"""`chatpapers db refresh`: stored titles of PDFs ingested without metadata are corrected from the
PDF's first page, or from arXiv by id; papers indexed before full-text search get their full text."""

from __future__ import annotations

import tarfile
from pathlib import Path

from api.exports import bibtex_entry
from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest.pipeline import IngestPipeline
from ingest.refresh import refresh
from ingest.sources import PdfTarSource, pdf_dir_items
from tests.conftest import cli_env, run_cli, subset_folder

LICENCE = "Provided proper attribution is provided, Google hereby grants permission to"


def _ingest_without_metadata(db: Database, settings: Settings, embedder: Embedder, tmp_path: Path) -> None:
    folder, _metadata = subset_folder(tmp_path / "pdfs", ["1706.03762v5.pdf", "1512.03385v1.pdf"])
    report = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder))
    assert report.new == 2


def _spoil(db: Database, embedder: Embedder) -> None:
    """What an ingest before the first-page reader stored: the licence line as title, and a
    lexical index without the full text."""
    with db.connect(autocommit=True) as conn:
        papers.set_description(conn, "1706.03762", title=LICENCE, abstract=None, authors=[],
                               paper_vector=embedder.embed_query(LICENCE), body=None)  # fmt: skip
        papers.set_lexical_body(conn, "1512.03385", None)


def _title(db: Database, paper_id: str) -> str:
    with db.connect(autocommit=True) as conn:
        stored = papers.get_paper(conn, paper_id)
    assert stored is not None
    return stored.title


def test_titles_come_back_from_the_pdf_and_the_full_text_is_indexed(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    _ingest_without_metadata(db, settings, embedder, tmp_path)
    _spoil(db, embedder)

    preview = refresh(settings, db, embedder, use_arxiv=False, dry_run=True)
    assert [(c.paper_id, c.old_title, c.title) for c in preview.corrections] == [
        ("1706.03762", LICENCE, "Attention Is All You Need")
    ]
    assert _title(db, "1706.03762") == LICENCE  # a dry run stores nothing

    report = refresh(settings, db, embedder, use_arxiv=False)
    assert report.checked == 2 and report.unchanged == 1 and report.reindexed == 1
    assert _title(db, "1706.03762") == "Attention Is All You Need"
    with db.connect(autocommit=True) as conn:
        assert papers.without_lexical_body(conn) == []
        hits = papers.search_papers(
            conn, embedder.embed_query("the Transformer: attention only, no recurrence"), 1
        )
        assert hits[0].paper_id == "1706.03762"  # the paper vector is made of the corrected description
    assert refresh(settings, db, embedder, use_arxiv=False).corrections == []  # nothing left to do


def test_arxiv_describes_papers_by_id_and_is_skipped_when_unreachable(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    _ingest_without_metadata(db, settings, embedder, tmp_path)
    _spoil(db, embedder)
    offline = settings.model_copy(update={"arxiv_api_url": "http://127.0.0.1:9/api/query"})
    report = refresh(offline, db, embedder)
    assert report.arxiv.startswith("unreachable") and [c.source for c in report.corrections] == ["PDF"]

    _spoil(db, embedder)
    report = refresh(settings, db, embedder)
    assert report.arxiv == "described 2 of 2 papers"
    # both get arXiv's authors; the spoiled one its title back
    assert [(c.paper_id, c.source) for c in report.corrections] == [
        ("1512.03385", "arXiv"),
        ("1706.03762", "arXiv"),
    ]
    with db.connect(autocommit=True) as conn:
        stored = papers.get_paper(conn, "1706.03762")
    assert stored is not None and stored.title == "Attention Is All You Need"
    assert "Ashish Vaswani" in stored.authors and stored.abstract


def test_refresh_from_the_command_line(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    _ingest_without_metadata(db, settings, embedder, tmp_path)
    _spoil(db, embedder)
    result = run_cli(cli_env(settings), "db", "refresh", "--no-arxiv", "--dry-run")
    assert result.returncode == 0, result.stderr
    printed = " ".join(result.stdout.split())  # the terminal may wrap long lines
    assert f"1706.03762: '{LICENCE}' -> 'Attention Is All You Need' (from the PDF)" in printed
    assert "2 papers checked: would correct 1, 1 already right" in printed


def test_papers_from_tar_archives_are_read_again_from_their_archive(
    db: Database, settings: Settings, embedder: Embedder, corpus_dir: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "arXiv_pdf_1706_001.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(corpus_dir / "pdfs" / "1706.03762v5.pdf", arcname="1706/1706.03762v5.pdf")
    assert IngestPipeline(settings, db, embedder).run(PdfTarSource(archive)).new == 1
    _spoil_title(db, embedder)
    report = refresh(settings, db, embedder, use_arxiv=False)
    assert [(c.paper_id, c.title, c.source) for c in report.corrections] == [
        ("1706.03762", "Attention Is All You Need", "PDF")
    ]
    assert _title(db, "1706.03762") == "Attention Is All You Need"

    archive.rename(tmp_path / "moved.tar")  # an archive no longer where it was ingested from
    _spoil_title(db, embedder)
    report = refresh(settings, db, embedder, use_arxiv=False)
    assert report.unreadable == ["1706.03762"] and report.corrections == []


def _spoil_title(db: Database, embedder: Embedder) -> None:
    with db.connect(autocommit=True) as conn:
        papers.set_description(conn, "1706.03762", title=LICENCE, abstract=None, authors=[],
                               paper_vector=embedder.embed_query(LICENCE), body=None)  # fmt: skip


def test_authors_read_from_the_pdf_are_stored_and_arxiv_replaces_them_for_good(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    _ingest_without_metadata(db, settings, embedder, tmp_path)
    with db.connect(autocommit=True) as conn:
        stored = papers.get_paper(conn, "1706.03762")
    assert stored is not None and stored.authors[:2] == ["Ashish Vaswani", "Noam Shazeer"]
    assert len(stored.authors) == 8
    # what the card and the BibTeX export show
    assert "author = {Ashish Vaswani and Noam Shazeer and Niki Parmar" in bibtex_entry(stored, "k")

    # described from their PDF (they have authors now), so a refresh still reads them
    offline = refresh(settings, db, embedder, use_arxiv=False)
    assert offline.checked == 2 and offline.corrections == []
    assert refresh(settings, db, embedder).arxiv == "described 2 of 2 papers"
    # arXiv's descriptions are never read over again from the PDF
    assert refresh(settings, db, embedder, use_arxiv=False).checked == 0


def test_a_metadata_record_without_an_abstract_gets_the_pdfs_and_keeps_the_rest(
    db: Database, settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    # the corpus sample's record of RETRO has no abstract, and its first page no "Abstract" heading
    folder, metadata = subset_folder(tmp_path / "pdfs", ["2112.04426v1.pdf"])
    assert IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, metadata)).new == 1
    with db.connect(autocommit=True) as conn:
        fresh = papers.get_paper(conn, "2112.04426")
        assert fresh is not None and (fresh.abstract or "").startswith("We enhance auto-regressive language")
        title, authors = fresh.title, fresh.authors
        # what an ingest before the paragraph reader stored
        papers.set_description(conn, "2112.04426", title=title, abstract=None, authors=authors,
                               paper_vector=embedder.embed_query(title), body=None)  # fmt: skip

    report = refresh(settings, db, embedder, use_arxiv=False)
    assert [(c.paper_id, c.source) for c in report.corrections] == [("2112.04426", "PDF abstract")]
    with db.connect(autocommit=True) as conn:
        stored = papers.get_paper(conn, "2112.04426")
        assert stored is not None and (stored.abstract or "").startswith("We enhance auto-regressive")
        assert (stored.title, stored.authors) == (title, authors)  # the record's own, not re-read
        hits = papers.search_papers(conn, embedder.embed_query("a retrieval-enhanced transformer"), 1)
        assert hits[0].paper_id == "2112.04426"
    assert refresh(settings, db, embedder, use_arxiv=False).corrections == []  # nothing left to do
