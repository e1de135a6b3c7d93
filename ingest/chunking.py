"""Page texts -> cleaned text -> ordered ~N-character chunks with page and offset."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

from corpus.models import ChunkRecord
from ingest.page_text import join_broken_words, running_text
from ingest.pdf_text import STAMP_RE

_SPACES = re.compile(r"[ \t\f\v\u00a0]+")
_NEWLINES = re.compile(r"\s*\n\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\ufffe\uffff]")
# Break preferences inside a chunk: paragraph, sentence end, clause, any space.
_SEPARATORS = ("\n\n", ". ", "? ", "! ", "; ", ": ", ", ", " ")


def clean_page(text: str) -> str:
    """Normalise one page: ligatures (NFKC), arXiv stamp removed, words broken at line ends
    joined (ingest/page_text.py), line breaks folded into spaces (pypdf emits one per printed
    line)."""
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = STAMP_RE.sub(" ", text)
    text = join_broken_words([text])[0]
    text = _NEWLINES.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def chunk_pages(
    pages: list[str], size: int = 1000, overlap: int = 0, title: str | None = None
) -> list[ChunkRecord]:
    """Split the paper into chunks of about `size` characters, in reading order, without its
    running headers and footers (`title` stays where it opens page 1). Each chunk knows the page
    it starts on (1-based) and its offset in the joined cleaned text."""
    starts: list[int] = []  # offset of each non-empty page in the joined text
    page_numbers: list[int] = []
    parts: list[str] = []
    offset = 0
    for number, raw in enumerate(running_text(pages, title), 1):
        text = clean_page(raw)
        if not text:
            continue
        starts.append(offset)
        page_numbers.append(number)
        parts.append(text)
        offset += len(text) + 2
    full = "\n\n".join(parts)
    spans = split_text(full, size=size, overlap=overlap)
    return [
        ChunkRecord(seq=i, text=piece, char_start=start, page=page_numbers[bisect_right(starts, start) - 1])
        for i, (start, piece) in enumerate(spans)
    ]


def split_text(text: str, size: int = 1000, overlap: int = 0) -> list[tuple[int, str]]:
    """Greedy split at the best separator in the last 40% of each window. Returns (start, text)."""
    if overlap >= size:
        raise ValueError("chunk overlap must be smaller than chunk size")
    out: list[tuple[int, str]] = []
    n = len(text)
    start = 0
    min_cut = int(size * 0.6)
    while start < n:
        while start < n and text[start].isspace():
            start += 1
        if start >= n:
            break
        end = min(start + size, n)
        if end < n:
            window = text[start:end]
            for sep in _SEPARATORS:
                i = window.rfind(sep, min_cut)
                if i != -1:
                    end = start + i + len(sep.rstrip())
                    break
        piece = text[start:end].strip()
        if piece:
            out.append((start, piece))
        if end >= n:
            break
        nxt = end
        if overlap:
            nxt = max(start + 1, end - overlap)
            space = text.find(" ", nxt, end)
            nxt = space + 1 if space != -1 else nxt
        start = nxt
    return out
