"""Title and abstract of a paper from its first page's layout, for PDFs that come without metadata.

The PDF's own document-info title is often missing or wrong (a LaTeX file name, a licence line),
and the first line of text is often a running header ("Published as a conference paper at ICLR
2015"). The title is set in the largest type near the top of page 1: its lines are found by the
size at which pypdf reports each piece of text, continued over the next lines of similar size
(multi-line titles, small capitals, subtitles) and stopped at the author block."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

from pydantic import BaseModel

# Lines that are set large yet are not titles: running headers, venue and licence lines.
_NOT_TITLE = re.compile(
    r"(published as|conference paper|proceedings|preprint|under review|workshop on|arxiv|"
    r"provided proper attribution|permission to|copyright|licen[cs]e|journal of|technical report|"
    r"submitted to|accepted (at|to|for)|manuscript|draft|©|\bvol\.|\bdoi\b)",
    re.IGNORECASE,
)
_ABSTRACT = re.compile(
    r"\babstract\b[\s.:—–-]*(?P<body>.{80,3000}?)\s*"
    r"(?:\b(?:1|I)\.?\s*introduction\b|\bintroduction\b|\bkeywords\b|\bindex terms\b|\bccs concepts\b|$)",
    re.IGNORECASE | re.DOTALL,
)
_TRAILING_MARKS = re.compile(r"[\s∗*†‡§¶,]+$")


class FrontMatter(BaseModel):
    title: str | None = None
    abstract: str | None = None


_AFFILIATION = re.compile(
    r"\b(university|universit[äé]|institute|laborator(y|ies)|department|school of|college|inc\.|"
    r"research|google|microsoft|deepmind|facebook|meta ai|openai|ibm|nvidia|amazon|bytedance)\b",
    re.IGNORECASE,
)


@dataclass
class _Line:
    y: float
    parts: list[tuple[str, float]] = field(default_factory=list)  # (text, type height)

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.parts)

    @property
    def size(self) -> float:
        """The line's type size: of its lettered parts (not of superscript marks or symbols)."""
        return max((h for t, h in self.parts if _letters(t) >= 2), default=0.0)

    @property
    def marks(self) -> int:
        """Superscripts (footnote and affiliation marks), as author lines have."""
        size = self.size
        return sum(1 for t, h in self.parts if t.strip() and h < 0.8 * size)


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


class LineCollector:
    """A pypdf `visitor_text`: gathers upright text into lines with their type size."""

    def __init__(self) -> None:
        self.lines: list[_Line] = []

    def __call__(self, text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        if not text or not text.strip():
            return
        a, b, c, d, e, f = tm
        ca, cb, cc, cd, _, cf = cm
        if abs(b) > 1e-6 or abs(c) > 1e-6 or a * ca <= 0:
            return  # rotated text: arXiv's margin stamp, figure labels
        height = abs(size) * math.hypot(c * ca + d * cc, c * cb + d * cd)
        y = e * cb + f * cd + cf
        for line in reversed(self.lines[-6:]):
            # same baseline, or a superscript mark (small, a few points up) on it
            if abs(line.y - y) <= 0.45 * max(line.size, height):
                line.parts.append((text, height))
                return
        self.lines.append(_Line(y=y, parts=[(text, height)]))


def clean_title(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = _TRAILING_MARKS.sub("", text)
    text = re.sub(r"^\d{1,2}\s+(?=[A-Z])", "", text)  # an affiliation or footnote mark before it
    return text.strip()


def layout_title(lines: list[_Line]) -> str | None:
    """The title: the largest type in the top part of the page, with its continuation lines."""
    if not lines:
        return None
    lines = sorted(lines, key=lambda line: -line.y)
    # The title sits above the abstract; anything below it (figures, big logos) is not the title.
    cut = next((i for i, line in enumerate(lines) if line.text.strip().lower().startswith("abstract")), None)
    top = lines[:cut] if cut else lines[: max(12, len(lines) // 3)]
    candidates = [line for line in top if _letters(line.text) >= 4 and not _NOT_TITLE.search(line.text)]
    body = _body_size(lines)
    # A title is set larger than the body text; a page without such a line (a page from the middle
    # of a paper) has no title to offer.
    sizes = [size for size in {round(line.size, 1) for line in candidates} if size > 1.12 * body]
    for size in sorted(sizes, reverse=True)[:4]:
        start = next(i for i, line in enumerate(top) if line in candidates and round(line.size, 1) == size)
        block = [top[start]]
        for line in top[start + 1 :]:
            if _letters(line.text) < 2:
                continue
            if not _continues_title(line, size, gap=block[-1].y - line.y):
                break
            block.append(line)
        title = clean_title(" ".join(line.text for line in block))
        if 8 <= len(title) <= 300 and _letters(title) >= 6:
            return title
    return None


def _body_size(lines: list[_Line]) -> float:
    """The type size that most of the page's letters are set in."""
    letters: dict[float, int] = {}
    for line in lines:
        for text, height in line.parts:
            letters[round(height, 1)] = letters.get(round(height, 1), 0) + _letters(text)
    return max(letters, key=lambda size: letters[size]) if letters else 0.0


def _continues_title(line: _Line, size: float, gap: float) -> bool:
    """A next line of a title (a wrapped title, small capitals, a subtitle), not the author
    block: similar type, close below, and none of the marks, addresses and affiliations of
    author lines."""
    smaller = line.size < 0.97 * size
    return not (
        line.size < 0.8 * size
        or gap > 2.0 * size
        or "@" in line.text
        or _AFFILIATION.search(line.text)
        or line.marks >= 2
        or (smaller and line.marks == 1)
    )


def abstract_of(first_pages_text: str) -> str | None:
    m = _ABSTRACT.search(first_pages_text)
    if not m:
        return None
    body = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", m.group("body"))
    body = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", body)).strip()
    return body if len(body) >= 80 else None


def plausible_info_title(info_title: str | None) -> str | None:
    """The PDF's document-info title when it looks like a title (not a file name or a header)."""
    if not info_title:
        return None
    title = clean_title(info_title)
    if len(title) <= 8 or title.lower().endswith((".dvi", ".pdf", ".tex", ".doc", ".docx")):
        return None
    return None if _NOT_TITLE.search(title) else title


def front_matter(lines: list[_Line], text: str, info_title: str | None = None) -> FrontMatter:
    """The layout's title, else the document-info title if plausible; the abstract."""
    title = layout_title(lines) or plausible_info_title(info_title)
    return FrontMatter(title=title, abstract=abstract_of(text))
