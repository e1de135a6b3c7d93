"""`chatpapers db refresh`: correct what earlier ingests stored.

Papers ingested from a folder of PDFs without metadata got their title from an older, weaker
reading of the first page ("Published as a conference paper at ICLR 2015", a licence line, a title
cut at its line break) and no authors. This reads each such paper's first page again
(ingest/front_matter.py: title, authors, abstract) and, for papers with an arXiv id, asks arXiv for
the real title, abstract and authors by `id_list`
(batched, 3 s apart like every arXiv request, skipped when arXiv is unreachable), then stores the
corrected description with the paper vector and lexical index made of it. It also gives papers
stored before full-text indexing (migration 007) their full-text words."""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel

from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.models import PaperMeta
from ground.settings import Settings
from ingest.arxiv_api import ArxivClient, ArxivError, PoliteHttp
from ingest.pdf_text import read_front_matter
from ingest.pipeline import paper_text
from ingest.sources import read_stored_pdf

ID_BATCH = 50  # ids per arXiv request: one polite request per 50 papers


class Correction(BaseModel):
    paper_id: str
    old_title: str
    title: str
    source: str  # "arXiv", "PDF", or "PDF abstract" (a metadata record that gave none)


class RefreshReport(BaseModel):
    checked: int = 0
    corrections: list[Correction] = []
    unchanged: int = 0
    unreadable: list[str] = []  # files gone or unreadable: left as they were
    arxiv: str = "not asked"  # what happened when arXiv was asked
    reindexed: int = 0  # papers whose lexical index got their full text


def same_title(a: str | None, b: str | None) -> bool:
    """Titles equal but for case, spacing, punctuation and TeX."""

    def norm(text: str | None) -> str:
        return re.sub(r"[^a-z0-9]+", "", (text or "").lower())

    return norm(a) == norm(b)


def _from_arxiv(settings: Settings, ids: list[str], report: RefreshReport) -> dict[str, PaperMeta]:
    if not ids:
        report.arxiv = "no paper with an arXiv id"
        return {}
    # Offline, one retry is enough to know: the default 5 with backoff would wait 1.5 minutes.
    client = ArxivClient(settings, PoliteHttp(settings.model_copy(update={"arxiv_max_retries": 1})))
    found: dict[str, PaperMeta] = {}
    try:
        for start in range(0, len(ids), ID_BATCH):
            batch = ids[start : start + ID_BATCH]
            _total, metas = client.query(id_list=batch, max_results=len(batch))
            found.update({m.paper_id: m for m in metas if m.paper_id in batch and m.title})
    except ArxivError as exc:
        report.arxiv = f"unreachable ({exc}); titles from the PDFs only"
        return found
    finally:
        client.close()
    report.arxiv = f"described {len(found)} of {len(ids)} papers"
    return found


def _described_anew(paper: papers.StoredFromFile, everything: bool) -> bool:
    """Whether a paper's whole description (title, abstract, authors) is read again; else, stored
    from a metadata record that gave no abstract, only its abstract is."""
    return everything or not paper.authors or paper.described_from_pdf


def refresh(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    *,
    use_arxiv: bool = True,
    everything: bool = False,
    dry_run: bool = False,
    on_paper: Callable[[], None] = lambda: None,
) -> RefreshReport:
    """Correct stored descriptions of papers ingested from PDF files. By default only papers stored
    without metadata are touched (described from their first page, or stored before authors were
    read from it: no authors): a description from a metadata file or arXiv is better than any
    reading of the PDF; `everything` includes them (arXiv still wins)."""
    report = RefreshReport()
    with db.connect(autocommit=True) as conn:
        stored = [
            p for p in papers.stored_from_files(conn) if _described_anew(p, everything) or not p.abstract
        ]
        stale_index = set(papers.without_lexical_body(conn))
    arxiv_ids = [p.paper_id for p in stored if not p.paper_id.startswith("local:")]
    described = _from_arxiv(settings, arxiv_ids, report) if use_arxiv else {}
    for paper in stored:
        report.checked += 1
        on_paper()
        meta = described.get(paper.paper_id)
        if meta is not None:
            title, abstract, authors, source = meta.title, meta.abstract, meta.authors, "arXiv"
        else:
            data = read_stored_pdf(paper.location) if paper.location else None
            if data is None:
                report.unreadable.append(paper.paper_id)
                continue
            front = read_front_matter(data)
            title, abstract, source = front.title, front.abstract, "PDF"
            authors = front.authors or paper.authors
            if not _described_anew(paper, everything):
                # described by a metadata file that gave no abstract (RETRO's record in the corpus
                # sample): only the abstract comes from the PDF, the record keeps the rest
                title, authors, source = paper.title, paper.authors, "PDF abstract"
        title = title or paper.title
        abstract = abstract or paper.abstract
        if same_title(title, paper.title) and abstract == paper.abstract and authors == paper.authors:
            report.unchanged += 1
            continue
        report.corrections.append(
            Correction(paper_id=paper.paper_id, old_title=paper.title, title=title, source=source)
        )
        if not dry_run:
            _store(db, embedder, paper.paper_id, title, abstract, authors or [], from_pdf=source == "PDF")
            stale_index.discard(paper.paper_id)
    if not dry_run:
        for paper_id in sorted(stale_index):
            with db.connect(autocommit=True) as conn:
                body = papers.lexical_body(text for _pid, _seq, text in papers.chunk_texts(conn, paper_id))
                papers.set_lexical_body(conn, paper_id, body)
            report.reindexed += 1
    return report


def _store(db: Database, embedder: Embedder, paper_id: str, title: str, abstract: str | None,
           authors: list[str], from_pdf: bool) -> None:  # fmt: skip
    with db.connect() as conn, conn.transaction():
        texts = [text for _pid, _seq, text in papers.chunk_texts(conn, paper_id)]
        about = paper_text(title, abstract, texts[0] if texts else "")
        papers.set_description(
            conn, paper_id, title=title, abstract=abstract, authors=authors,
            paper_vector=embedder.embed([about])[0], body=papers.lexical_body(texts),
        )  # fmt: skip
        # the PDF's reading is corrected again by later refreshes; arXiv's record is left alone
        papers.set_described_from_pdf(conn, paper_id, from_pdf)
