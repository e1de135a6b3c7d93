"""The CPU-heavy half of ingest that runs in a worker process: PDF -> text -> chunks.

Kept free of torch and the database so the worker process starts fast and stays small."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel

from corpus.models import ChunkRecord
from ingest.chunking import chunk_pages, clean_page
from ingest.pdf_text import ArxivStamp, PdfProblem, extract_pdf

# The version of what this module makes of a PDF: the text and its chunks. Raise it when a change
# to the extraction (ingest/pdf_text.py, page_text.py, glyphs.py, chunking.py) changes the text of
# papers already stored: each is then read again by the next ingest of its file, and by `chatpapers
# db refresh` (stored with the paper as ingest_items.text_version; NULL, before the column, counts
# as older). 1: running headers and page numbers dropped, words hyphenated across lines joined,
# TeX's math signs and ligatures kept, small capitals read (2026-12-05).
TEXT_VERSION = 1


class PreparedPaper(BaseModel):
    sha256: str
    status: str  # 'ok' | 'empty' | 'failed'
    reason: str | None = None
    n_pages: int | None = None
    chunks: list[ChunkRecord] = []
    stamp: ArxivStamp | None = None
    title_guess: str | None = None
    abstract_guess: str | None = None
    authors_guess: list[str] = []  # printed under the title on page 1 (ingest/authors.py)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _title_guess(front_title: str | None, first_page: str) -> str | None:
    """The title of the front matter (layout, or a plausible document-info title); else the
    first line long enough to be one."""
    if front_title:
        return front_title
    for line in first_page.splitlines():
        line = clean_page(line)
        if len(line) >= 12 and not line.lower().startswith("arxiv:"):
            return line[:300]
    return None


def prepare_pdf(data: bytes | Path, chunk_size: int, chunk_overlap: int) -> PreparedPaper:
    """Never raises for bad input: problems come back as status 'failed' or 'empty' with a reason."""
    if isinstance(data, Path):
        try:
            data = data.read_bytes()
        except OSError as exc:
            return PreparedPaper(sha256="", status="failed", reason=f"cannot read file: {exc}")
    digest = sha256_of(data)
    try:
        pdf = extract_pdf(data)
    except PdfProblem as exc:
        return PreparedPaper(sha256=digest, status="failed", reason=exc.reason)
    chunks = chunk_pages(pdf.pages, size=chunk_size, overlap=chunk_overlap, title=pdf.front.title)
    title = _title_guess(pdf.front.title, pdf.pages[0])
    if not chunks:
        return PreparedPaper(
            sha256=digest,
            status="empty",
            n_pages=pdf.n_pages,
            stamp=pdf.stamp,
            title_guess=title,
            abstract_guess=pdf.front.abstract,
            authors_guess=pdf.front.authors,
            reason=f"no extractable text in {pdf.n_pages} page(s) (scanned or image-only PDF?)",
        )
    return PreparedPaper(
        sha256=digest,
        status="ok",
        n_pages=pdf.n_pages,
        chunks=chunks,
        stamp=pdf.stamp,
        title_guess=title,
        abstract_guess=pdf.front.abstract,
        authors_guess=pdf.front.authors,
    )
