"""Title, authors and abstract of a paper from its first page's layout, for PDFs that come without
metadata.

The PDF's own document-info title is often missing or wrong (a LaTeX file name, a licence line),
and the first line of text is often a running header ("Published as a conference paper at ICLR
2015"). The title is set in the largest type near the top of page 1: its lines are found by the
size at which pypdf reports each piece of text (ingest/page_lines.py), continued over the next
lines of similar size (multi-line titles, small capitals, subtitles) and stopped at the author
block. Text inside embedded figures is no candidate: a teaser figure's captions or a plot's legend
can be set larger than the title. The authors are the names printed between the title and the
abstract (ingest/authors.py)."""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel

from ingest.authors import authors_below, is_prose, opens_body
from ingest.page_lines import Line, letters
from ingest.page_text import join_broken_words

# Lines that are set large yet are not titles: running headers, venue and licence lines.
_NOT_TITLE = re.compile(
    r"(published as|conference paper|proceedings|preprint|under review|workshop on|arxiv|"
    r"provided proper attribution|permission to|copyright|licen[cs]e|journal of|technical report|"
    r"submitted to|accepted (at|to|for)|manuscript|draft|©|\bvol\.|\bdoi\b)",
    re.IGNORECASE,
)
_ABSTRACT = re.compile(
    r"\babstract\b[\s.:—–-]*(?P<body>.{80,3000}?)\s*"
    r"(?:\b(?:1|I)\.?\s*introduction\b|\bintroduction\b|\bkeywords\b|\bindex terms\b|\bccs concepts\b"
    # a table of contents before the introduction (a long report's: GLRM's, PaLM's)
    r"|(?<=\n)contents\s*\n|$)",
    re.IGNORECASE | re.DOTALL,
)
_TRAILING_MARKS = re.compile(r"[\s∗*†‡§¶,]+$")


class FrontMatter(BaseModel):
    title: str | None = None
    abstract: str | None = None
    authors: list[str] = []  # as printed under the title; [] when none were found


_AFFILIATION = re.compile(
    r"\b(university|universit[äé]|institute|laborator(y|ies)|department|school of|college|inc\.|"
    r"research|google|microsoft|deepmind|facebook|meta ai|openai|ibm|nvidia|amazon|bytedance)\b",
    re.IGNORECASE,
)


def clean_title(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    # A title broken after a hyphen is a compound ("Memory-/Augmented"): titles are not hyphenated.
    text = re.sub(r"(\w)-[ \t]*\n\s*(\w)", r"\1-\2", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = _TRAILING_MARKS.sub("", text)
    text = re.sub(r"^\d{1,2}\s+(?=[A-Z])", "", text)  # an affiliation or footnote mark before it
    return text.strip()


def title_block(lines: list[Line]) -> list[Line] | None:
    """The lines of the title, top to bottom, or None when the page has no title."""
    if not lines:
        return None
    lines = sorted(lines, key=lambda line: -line.y)
    # The title sits above the abstract; anything below it (figures, big logos) is not the title.
    cut = next((i for i, line in enumerate(lines) if line.text.strip().lower().startswith("abstract")), None)
    top = lines[:cut] if cut else lines[: max(12, len(lines) // 3)]
    candidates = [line for line in top if letters(line.text) >= 4 and not _NOT_TITLE.search(line.text)]
    body = _body_size(lines)
    # A title is set larger than the body text; a page without such a line (a page from the middle
    # of a paper) has no title to offer.
    sizes = [size for size in {round(line.size, 1) for line in candidates} if size > 1.12 * body]
    for size in sorted(sizes, reverse=True)[:4]:
        start = next(i for i, line in enumerate(top) if line in candidates and round(line.size, 1) == size)
        block = [top[start]]
        for line in top[start + 1 :]:
            if letters(line.text) < 2:
                continue
            if not _continues_title(line, size, gap=block[-1].y - line.y):
                break
            block.append(line)
        title = clean_title("\n".join(line.text for line in block))
        if 8 <= len(title) <= 300 and letters(title) >= 6:
            return block
    return None


def _body_size(lines: list[Line]) -> float:
    """The type size that most of the page's letters are set in."""
    counts: dict[float, int] = {}
    for line in lines:
        for part in line.parts:
            counts[round(part.height, 1)] = counts.get(round(part.height, 1), 0) + letters(part.text)
    return max(counts, key=lambda size: counts[size]) if counts else 0.0


def _continues_title(line: Line, size: float, gap: float) -> bool:
    """A next line of a title (a wrapped title, small capitals, a subtitle), not the author
    block: similar type, close below, and none of the marks, addresses and affiliations of
    author lines. A line in the title's own type at the title's line spacing is the title going
    on, whatever its words ("... for Interacting with Academic / Research")."""
    smaller = line.size < 0.97 * size
    same_paragraph = not smaller and gap <= 1.6 * size
    return not (
        line.size < 0.8 * size
        or gap > 2.0 * size
        or "@" in line.text
        or (_AFFILIATION.search(line.text) and not same_paragraph)
        or line.marks >= 2
        or (smaller and line.marks == 1)
    )


def abstract_of(first_pages_text: str, authors: list[str] | None = None) -> str | None:
    """The abstract: the text after an "Abstract" heading up to the introduction (or keywords);
    failing that, the first paragraph after the heading, or, without a heading, the first
    paragraph of prose under the authors (`authors`: the names printed under the title)."""
    # words broken at line ends joined as in the chunks ("dynami-/cally", "state-of-the-/art")
    m = _ABSTRACT.search(join_broken_words([first_pages_text])[0])
    if m:
        return _plain(m.group("body"))
    lines = first_pages_text.splitlines()
    heading = next((i for i, line in enumerate(lines) if _ABSTRACT_HEADING.match(line)), None)
    if heading is not None:
        # "Abstract" with no introduction heading to end it (the introduction starts unheaded)
        first = _ABSTRACT_HEADING.match(lines[heading]).group("rest")  # type: ignore[union-attr]
        found = first_paragraph([first, *lines[heading + 1 :]] if first else lines[heading + 1 :])
        if found:
            return found
    if authors is None:
        return None
    # No heading at all (ACM's and DeepMind's layouts, a cover page): the paragraph under the
    # names, after the first line that names the last author ("KYLE LO, Allen Institute ..."; page
    # 2's running header "12:2 Yaxiong Xie and Kyle Jamieson" names them again).
    named = authors[-1].lower() if authors else None
    last = next((i for i, line in enumerate(lines) if named and named in line.lower()), -1)
    start = next((i for i in range(last + 1, len(lines)) if is_prose(lines[i])), None)
    return first_paragraph(lines[start:]) if start is not None else None


def _plain(body: str) -> str | None:
    body = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", body)).strip()
    body = re.sub(r"(?<=[.!?])\s+\d{1,3}$", "", body)  # the page's number after its last sentence
    return body if len(body) >= 80 else None


_ABSTRACT_HEADING = re.compile(r"^\s*abstract\b[\s.:—–-]*(?P<rest>.*)$", re.IGNORECASE)
# a page number or an arXiv stamp between the paragraph and the next page
_FURNITURE = re.compile(r"^\s*(?:\d{1,3}|arXiv:\S+.*)\s*$")
_CLOSES_SENTENCE = re.compile(r"[.!?][)\"”’∗*†‡\d]*$")
_NOT_ABSTRACT = re.compile(r"^(?:fig(?:ure|\.)|table|algorithm)\s*\d", re.IGNORECASE)
SHORT_LINE = 0.85  # of the paragraph's width: a line this short that ends a sentence ends it
MIN_ABSTRACT_LINES = 3


def first_paragraph(lines: list[str]) -> str | None:
    """The first paragraph of prose in `lines`: lines of the paragraph's width, up to a shorter
    line that ends a sentence, a heading (introduction, keywords, CCS concepts), page furniture
    or the end. A narrower line above its first full one is a note or an affiliation ("All
    authors from DeepMind, Equal contributions"), not the paragraph. None when what is found is
    no abstract-like paragraph (too short, a caption)."""
    paragraph: list[str] = []
    width = 0
    for raw in lines:
        line = raw.strip()
        if not line:
            if paragraph:
                break
            continue
        if opens_body(line) or _FURNITURE.match(line):
            break
        paragraph.append(line)
        width = max(width, len(line))
        if len(paragraph) >= 2 and _CLOSES_SENTENCE.search(line) and len(line) < SHORT_LINE * width:
            break
    while paragraph and len(paragraph[0]) < SHORT_LINE * width:
        paragraph.pop(0)
    if len(paragraph) < MIN_ABSTRACT_LINES or not paragraph[0][:1].isupper():
        return None
    if _NOT_ABSTRACT.match(paragraph[0]):
        return None
    text = _plain(join_broken_words(["\n".join(paragraph)])[0])
    if not text or "@" in text or len(re.findall(r"[.!?](?:\s|$)", text)) < 2:
        return None
    return text


def plausible_info_title(info_title: str | None) -> str | None:
    """The PDF's document-info title when it looks like a title (not a file name or a header)."""
    if not info_title:
        return None
    title = clean_title(info_title)
    if len(title) <= 8 or title.lower().endswith((".dvi", ".pdf", ".tex", ".doc", ".docx")):
        return None
    return None if _NOT_TITLE.search(title) else title


def front_matter(lines: list[Line], text: str, info_title: str | None = None) -> FrontMatter:
    """The layout's title and the authors printed under it, else the document-info title if
    plausible; the abstract. Text inside embedded figures is left out (a teaser figure above the
    title, a plot's legend set larger than the title), unless the whole page is one figure (a
    page pasted in as a form XObject)."""
    printed = [line for line in lines if not line.in_figure]
    block = title_block(printed)
    if block is None:
        printed = lines
        block = title_block(lines)
    if block is None:
        return FrontMatter(title=plausible_info_title(info_title), abstract=abstract_of(text))
    authors = authors_below(printed, title_bottom=block[-1].y)
    return FrontMatter(
        title=clean_title("\n".join(line.text for line in block)),
        abstract=abstract_of(text, authors),
        authors=authors,
    )
