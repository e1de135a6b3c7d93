"""The distractors of bench/distractors.py's stages b and c, added to a benchmark database: every
other PDF of ../shared/corpus through the product's ingest, and every other real arXiv record of it
(the Kaggle snapshot head, Atom, OAI-PMH, listings) as metadata-only papers. bench/grounded.py's
full runs answer over the same corpus (`--distractors`)."""

from __future__ import annotations

from bench.inbox import CORPUS, Paper, load_papers
from chatpapers.services import Services
from corpus import papers
from corpus.models import PaperMeta
from ingest.pipeline import IngestPipeline, IngestReport, paper_text
from ingest.snapshot import backfill_snapshot
from ingest.sources import canonical_pdf_url, pdf_dir_items

KAGGLE = CORPUS / "kaggle" / "arxiv-metadata-oai-snapshot.head.jsonl"


def add_full_text(services: Services) -> IngestReport:
    """Every PDF of the corpus besides pdfs/, through the product's ingest."""
    items = [
        *pdf_dir_items(CORPUS / "extra", CORPUS / "metadata.jsonl"),
        *pdf_dir_items(CORPUS / "edge", CORPUS / "metadata.jsonl"),
    ]
    return IngestPipeline(services.settings, services.db, services.embedder).run(items)


def _meta(paper: Paper) -> PaperMeta:
    return PaperMeta(
        paper_id=paper.paper_id,
        title=paper.title,
        authors=paper.authors,
        abstract=paper.abstract,
        categories=paper.categories,
        primary_category=paper.categories[0] if paper.categories else None,
        published=paper.date,
    )


def add_metadata_only(services: Services, records: list[Paper]) -> dict[str, int]:
    """The Kaggle snapshot head through the product's backfill, then every other real record not
    stored yet the same way (title + abstract vector, no chunks)."""
    snapshot = backfill_snapshot(services.db, services.embedder, KAGGLE)
    others = [r for r in records if r.source != "kaggle"]
    with services.db.connect(autocommit=True) as conn:
        stored = papers.stored_ids(conn, [r.paper_id for r in others])
        todo = [_meta(r) for r in others if r.paper_id not in stored]
        vectors = services.embedder.embed([paper_text(m.title or "", m.abstract, "") for m in todo])
        with conn.transaction():
            papers.copy_metadata_only(conn, todo, [canonical_pdf_url(m) for m in todo], vectors)
    return {"kaggle_added": snapshot.added, "kaggle_skipped": snapshot.skipped, "others_added": len(todo)}


def with_distractors(services: Services) -> None:
    """bench/distractors.py's stages b and c in this database: the corpus's other PDFs through the
    ingest, and its other real records as metadata-only papers. Both steps skip what is stored, so
    a later run adds nothing and one cut off part way is completed (seconds when all is there)."""
    ingested = add_full_text(services)
    added = add_metadata_only(services, load_papers(CORPUS))
    if ingested.new or added["kaggle_added"] or added["others_added"]:
        print(
            f"distractors added: {ingested.new} papers with text ({ingested.chunks} chunks), {added}",
            flush=True,
        )
