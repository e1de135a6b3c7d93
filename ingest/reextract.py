"""Papers whose stored text an older extraction made, read again (part of `chatpapers db refresh`).

The extraction gets better (ingest/prepare.py TEXT_VERSION), and a stored paper keeps the text it
was stored with: chunks with the title of the paper pasted mid-sentence, "2 × 10−4" stored as
"2 104". The next ingest of a folder or archive reads its older papers again by itself
(ingest/skips.py); a paper fetched from arXiv is not met again by the nightly run, whose watermark
stops above it. This reads every such paper from where it came from: the file or archive member it
was ingested from (when it still holds the same bytes), or, asked with `refetch`, arXiv (polite,
like every arXiv request), and stores its new text, chunks and vectors through the ingest
pipeline. A paper whose PDF cannot be had, or now fails or reads empty, keeps what it has."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from corpus import ingest_state, papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.models import PaperMeta
from ground.settings import Settings
from ingest.arxiv_api import ArxivClient, ArxivError, PoliteHttp
from ingest.pipeline import IngestPipeline, Progress
from ingest.prepare import TEXT_VERSION, sha256_of
from ingest.sources import LOCAL_SOURCES, WorkItem, read_stored_pdf


class ReextractReport(BaseModel):
    older: int = 0  # papers whose text an older extraction made
    reread: int = 0  # of them, stored again with this extraction's text
    missing: list[str] = []  # the file is gone or holds other bytes, and arXiv was not asked or failed
    on_arxiv: int = 0  # fetched from arXiv and not fetched again (no --refetch): left as they were
    arxiv: str = "not asked"
    failed: list[str] = []  # read, but the extraction failed or found no text: the old text is kept


def older_papers(db: Database) -> list[ingest_state.OlderText]:
    with db.connect(autocommit=True) as conn:
        return ingest_state.older_text(conn, TEXT_VERSION)


def _meta(db: Database, older: ingest_state.OlderText) -> PaperMeta:
    """What the paper came with; a description read from its first page is read again."""
    with db.connect(autocommit=True) as conn:
        stored = papers.get_paper(conn, older.paper_id)
    if stored is None:
        return PaperMeta(paper_id=older.paper_id, version=older.version)
    if older.described_from_pdf:
        return PaperMeta(
            paper_id=stored.paper_id, version=stored.version, categories=stored.categories,
            primary_category=stored.primary_category, published=stored.published, updated=stored.updated,
            pdf_url=stored.pdf_url,
        )  # fmt: skip
    return PaperMeta(
        paper_id=stored.paper_id, version=stored.version, title=stored.title, authors=stored.authors,
        abstract=stored.abstract, categories=stored.categories, primary_category=stored.primary_category,
        published=stored.published, updated=stored.updated, pdf_url=stored.pdf_url,
    )  # fmt: skip


def _items(
    settings: Settings,
    db: Database,
    older: list[ingest_state.OlderText],
    refetch: bool,
    report: ReextractReport,
) -> Iterator[WorkItem]:
    """One work item a paper whose PDF could be read, in hand: a PDF that cannot be had now leaves
    its paper as it was (the pipeline would record the stored paper as failed)."""
    client: ArxivClient | None = None
    reachable = refetch
    try:
        for paper in older:
            local = paper.source in LOCAL_SOURCES and paper.location
            data = read_stored_pdf(paper.location) if local and paper.location else None
            if data is not None and paper.source_sha256 not in (None, sha256_of(data)):
                # other bytes where the paper's file was: another paper's text must not be stored
                # under this one's id (a local id is its file's hash)
                data = None
            if data is not None:
                yield WorkItem(meta=_meta(db, paper), source=paper.source, location=paper.location or "",
                               fetch=lambda d=data: d)  # fmt: skip
                continue
            if paper.source == "arxiv" and not refetch:
                report.on_arxiv += 1
                continue
            if not reachable or paper.paper_id.startswith("local:"):
                report.missing.append(paper.paper_id)
                continue
            meta = _meta(db, paper)
            if client is None:
                # Offline, one retry is enough to know (the default five with backoff take minutes).
                once = settings.model_copy(update={"arxiv_max_retries": 1})
                client = ArxivClient(settings, PoliteHttp(once))
            try:
                data = client.download_pdf(meta)
            except ArxivError as exc:
                report.missing.append(paper.paper_id)
                if "HTTP 404" not in str(exc):
                    reachable = False  # unreachable: the rest are not asked for
                    report.arxiv = f"unreachable ({exc})"
                continue
            report.arxiv = "PDFs fetched again"
            # recorded as fetched from arXiv (a file that is gone is no longer where it came from)
            yield WorkItem(meta=meta, source="arxiv", location=client.pdf_url(meta), fetch=lambda d=data: d)
    finally:
        if client is not None:
            client.close()


def reextract(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    *,
    refetch: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
    older: list[ingest_state.OlderText] | None = None,
) -> ReextractReport:
    """Read again every stored paper whose text an older extraction made and whose PDF is on this
    machine; with `refetch`, those fetched from arXiv too (downloaded again, 3 s apart: a whole
    corpus takes days, so never by default). `dry_run` counts them. `older`: those papers, when the
    caller has them already."""
    older = older_papers(db) if older is None else older
    report = ReextractReport(older=len(older))
    if dry_run:
        report.on_arxiv = sum(p.source == "arxiv" for p in older) if not refetch else 0
        return report
    if not older:
        return report
    pipeline = IngestPipeline(settings, db, embedder, progress=progress, keep_stored=True)
    ingested = pipeline.run(_items(settings, db, older, refetch, report))
    report.reread = ingested.new + ingested.updated + ingested.empty
    report.failed = [f.paper_id for f in ingested.failed]
    return report
