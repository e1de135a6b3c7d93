"""PDF bytes -> page texts with pypdf, with a reason for every way a PDF can be unusable."""

from __future__ import annotations

import io
import logging
import re
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ingest.front_matter import FrontMatter, front_matter
from ingest.glyphs import restore_glyphs
from ingest.page_lines import LineCollector

if TYPE_CHECKING:
    from pypdf import PageObject

logging.getLogger("pypdf").setLevel(logging.ERROR)

# The arXiv margin stamp: "arXiv:1706.03762v5  [cs.CL]  6 Dec 2017" (old ids: "arXiv:cs/0112017v1").
STAMP_RE = re.compile(
    r"arXiv:\s*(?P<id>\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v(?P<v>\d+))?\s*"
    r"\[(?P<cat>[A-Za-z.-]+)\]\s*(?P<date>\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})"
)


FRONT_PAGES = 2


class PdfProblem(Exception):
    """The PDF cannot be used; `reason` is shown to people and stored."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ArxivStamp(BaseModel):
    paper_id: str
    version: int | None
    category: str
    date: datetime | None


class PdfText(BaseModel):
    pages: list[str]
    front: FrontMatter = FrontMatter()  # title, authors, abstract (first page's layout, document info)
    stamp: ArxivStamp | None = None

    @property
    def n_pages(self) -> int:
        return len(self.pages)


def find_stamp(first_page_text: str) -> ArxivStamp | None:
    m = STAMP_RE.search(first_page_text)
    if not m:
        return None
    try:
        date = datetime.strptime(" ".join(m.group("date").split()), "%d %b %Y")
    except ValueError:
        date = None
    version = int(m.group("v")) if m.group("v") else None
    return ArxivStamp(paper_id=m.group("id"), version=version, category=m.group("cat"), date=date)


def extract_pdf(data: bytes) -> PdfText:
    """Text of every page. Raises PdfProblem for files that are not PDFs, need a password or are
    unreadable; a readable PDF without a text layer returns pages of empty strings."""
    import pypdf
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    # Some damaged files lost their header but keep a readable body and trailer: let pypdf try.
    if b"%PDF-" not in data[:1024] and b"%%EOF" not in data[-2048:]:
        preview = data[:40].decode("latin-1", errors="replace").strip() or "(empty file)"
        raise PdfProblem(f"not a PDF ({len(data)} bytes, starts with {preview!r})")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                ok = reader.decrypt("")
            except Exception as exc:  # unsupported crypto handlers raise assorted errors
                raise PdfProblem(f"encrypted PDF that cannot be decrypted ({exc})") from exc
            if not ok:
                raise PdfProblem("encrypted PDF protected by a user password")
        pages: list[str] = []
        collectors: list[LineCollector] = []
        for page in reader.pages:
            try:
                if len(collectors) < FRONT_PAGES:  # where a title and an abstract can be
                    collectors.append(LineCollector())
                    pages.append(_extract_with(page, collectors[-1]))
                else:
                    pages.append(restore_glyphs(page.extract_text() or ""))
            except (FileNotDecryptedError, PdfProblem):
                raise
            except Exception:  # one broken page should not sink the paper
                pages.append("")
        title = None
        try:
            if reader.metadata and reader.metadata.title:
                title = str(reader.metadata.title).strip() or None
        except Exception:
            title = None
    except PdfProblem:
        raise
    except FileNotDecryptedError as exc:
        raise PdfProblem("encrypted PDF protected by a user password") from exc
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        raise PdfProblem(f"unreadable or truncated PDF ({type(exc).__name__}: {exc})") from exc
    if not pages:
        raise PdfProblem("PDF has no pages")
    stamp = find_stamp(pages[0])
    return PdfText(pages=pages, stamp=stamp, front=_front(collectors, pages, title))


def read_front_matter(data: bytes) -> FrontMatter:
    """Title, authors and abstract from the first pages only (fast: the rest is not extracted)."""
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return FrontMatter()
        collectors, pages = [], []
        for page in reader.pages[:FRONT_PAGES]:
            collectors.append(LineCollector())
            pages.append(_extract_with(page, collectors[-1]))
        info_title = str(reader.metadata.title) if reader.metadata and reader.metadata.title else None
    except Exception:  # a broken file has no front matter to offer; ingest reports why it is broken
        return FrontMatter()
    return _front(collectors, pages, info_title)


def _extract_with(page: PageObject, collector: LineCollector) -> str:
    """The page's text, its lines gathered by `collector` on the way."""
    text = page.extract_text(
        visitor_text=collector,
        visitor_operand_before=collector.before_operator,
        visitor_operand_after=collector.after_operator,
    )
    return restore_glyphs(text or "")


def _front(collectors: list[LineCollector], pages: list[str], info_title: str | None) -> FrontMatter:
    """From page 1's layout, or page 2's when page 1 is a cover; else the document-info title."""
    text = "\n".join(pages[:FRONT_PAGES])
    for collector in collectors:
        found = front_matter(collector.lines, text)
        if found.title:
            return found
    return front_matter([], text, info_title)
