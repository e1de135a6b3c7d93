"""A paper's page texts made into running text: running headers and footers dropped, words
hyphenated at the end of a line joined.

pypdf gives each page's text with the page's header first and its footer last ("Improving
language models by retrieving from trillions of tokens" on every page, "12:3", "Proc. ACM ...",
a page number). Left in, they land in the middle of the sentence that runs over the page break,
and answers quote them ("by asking the model to REALM: Retrieval-Augmented Language Model
Pre-Training decide what knowledge to retrieve"). They are found as what they are: lines at the
top or bottom of many pages that read the same but for their numbers.

A line ending in a hyphen is either a word broken in two ("dynami-/cally") or a compound that
broke at its own hyphen ("state-of-the-/art", "ResNet-/34", "meta-/learning"). The paper itself
says which: a word written whole or with its hyphen elsewhere in the text decides; otherwise a
lowercase continuation of a plain word is a broken word, and a capital, a digit or a compound
that already has hyphens keeps its hyphen."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable

_EDGE_LINES = 4  # lines at the top and at the bottom of a page where headers and footers are
_MIN_PAGES = 3  # a line on fewer pages than this is no running header
_SHARE_OF_PAGES = 0.25  # ... nor one on fewer than this share of the pages (odd/even headers: ~0.5)
_PAGE_NUMBER = re.compile(r"^\s*(?:page\s+)?(\d{1,4})(?:\s+of\s+\d{1,4})?\s*$", re.IGNORECASE)
_STAMP = re.compile(r"^\s*arXiv:\S+\s+\[[\w.-]+\]\s+\d{1,2}\s+\w{3}\s+\d{4}\s*$")
_WORD = r"[^\W_]+(?:-[^\W_]+)*"
_BROKEN = re.compile(rf"(?P<left>{_WORD})-[ \t]*\n[ \t]*(?P<right>{_WORD})")
# A broken word whose line break pypdf made a space (table cells: "material science ab- stracts"),
# unless it is the first half of a pair ("pre- and post-training").
_BROKEN_INLINE = re.compile(rf"(?P<left>{_WORD})- (?P<right>(?!(?:and|or|to|nor|vs)\b)[^\W\d_]+)")
_PAGE_END = re.compile(rf"(?P<left>{_WORD})-\s*$")
_PAGE_START = re.compile(rf"^\s*(?P<right>{_WORD})")


def running_text(pages: list[str], title: str | None = None) -> list[str]:
    """The pages without running headers, footers and page numbers, with the words broken at
    line ends (and at page ends) joined. As many pages as given, so page numbers stay right;
    `title` is kept where it opens page 1 even when the header repeats it."""
    return join_broken_words(strip_running_heads(pages, keep=title))


def strip_running_heads(pages: list[str], keep: str | None = None) -> list[str]:
    """Drop the lines at the top and bottom of pages that repeat, numbers aside, on many pages,
    and the page numbers there."""
    lines = [page.split("\n") for page in pages]
    used = sum(1 for page in pages if page.strip())
    if used < _MIN_PAGES:
        return pages
    least = max(_MIN_PAGES, math.ceil(_SHARE_OF_PAGES * used))
    seen = Counter(key for page in lines for key in {_key(line) for line in _edges(page)} if key)
    repeated = {key for key, n in seen.items() if n >= least}
    numbers = _page_numbers(lines, least)
    kept = _key(keep) if keep else None

    def removable(line: str, index: int) -> bool:
        if not line.strip() or _STAMP.match(line):
            return True
        key = _key(line)
        if key in repeated and not (index == 0 and key == kept):
            return True
        number = _PAGE_NUMBER.match(line)
        return number is not None and int(number.group(1)) in numbers[index]

    return [_trim(page, lambda line, i=i: removable(line, i)) for i, page in enumerate(lines)]


def _trim(lines: list[str], removable: Callable[[str], bool]) -> str:
    """The page without the removable lines at its top and bottom."""
    start, end = 0, len(lines)
    while start < end and start < _EDGE_LINES and removable(lines[start]):
        start += 1
    while end > start and len(lines) - end < _EDGE_LINES and removable(lines[end - 1]):
        end -= 1
    return "\n".join(lines[start:end])


def _edges(lines: list[str]) -> list[str]:
    filled = [line for line in lines if line.strip()]
    return filled[:_EDGE_LINES] + filled[-_EDGE_LINES:]


def _key(line: str) -> str:
    """A line as headers repeat it: case, spacing and numbers (page, article) aside. Lines with
    fewer than three letters (numbers, axis ticks) are no header ("")."""
    text = unicodedata.normalize("NFKC", line).lower()
    if sum(ch.isalpha() for ch in text) < 3:
        return ""
    return " ".join(re.sub(r"\d+", "#", text).split())


def _page_numbers(lines: list[list[str]], least: int) -> list[set[int]]:
    """Per page, the bare numbers at its edges that are page numbers: that count on from the
    previous page or up to the next one (also where the count starts again, an appendix numbered
    from 1), or that stand as far from the page's position as on many other pages (numbers on
    even pages only, odd ones in the header line). A number that fits neither (a table's last
    row) is kept."""
    found = [{int(m.group(1)) for line in _edges(page) if (m := _PAGE_NUMBER.match(line))} for page in lines]
    offsets = Counter(n - i for i, numbers in enumerate(found) for n in numbers)
    common = {offset for offset, count in offsets.items() if count >= least}
    before, after = [set(), *found[:-1]], [*found[1:], set()]
    return [
        {n for n in numbers if n - 1 in before[i] or n + 1 in after[i] or n - i in common}
        for i, numbers in enumerate(found)
    ]


def join_broken_words(pages: list[str]) -> list[str]:
    """Join words broken at line ends, within pages and across a page break (the second half
    moves to the page where the word starts)."""
    # The arXiv stamp can sit between the two halves ("collec-", stamp, "tions").
    pages = ["\n".join(ln for ln in page.split("\n") if not _STAMP.match(ln)) for page in pages]
    vocabulary = Counter(w.lower() for page in pages for w in re.findall(_WORD, page))
    pages = [_BROKEN.sub(lambda m: _join(m["left"], m["right"], vocabulary), page) for page in pages]
    pages = [_BROKEN_INLINE.sub(lambda m: _join_seen(m, vocabulary), page) for page in pages]
    for i in range(len(pages) - 1):
        tail = len(pages[i]) - min(len(pages[i]), 200)  # the page's last line is all it needs
        end, start = _PAGE_END.search(pages[i], tail), _PAGE_START.match(pages[i + 1])
        if end and start and start["right"][0].islower():
            pages[i] = pages[i][: end.start()] + _join(end["left"], start["right"], vocabulary)
            pages[i + 1] = pages[i + 1][start.end() :].lstrip(" \t")
    return pages


def _join_seen(m: re.Match, vocabulary: Counter) -> str:
    """Join "ab- stracts" only where the paper writes the word whole elsewhere."""
    whole = (m["left"] + m["right"]).lower()
    seen = vocabulary[whole] > vocabulary[f"{m['left']}-{m['right']}".lower()]
    return m["left"] + m["right"] if seen and m["right"][0].islower() else m.group(0)


def _join(left: str, right: str, vocabulary: Counter) -> str:
    """`left` and `right` as one word: whole ("dynamically") or with the hyphen ("state-of-the-art")."""
    whole, hyphenated = vocabulary[(left + right).lower()], vocabulary[f"{left}-{right}".lower()]
    if whole != hyphenated:
        keep = hyphenated > whole
    else:
        keep = "-" in left or right[0].isupper() or right[0].isdigit() or left[-1].isdigit()
    return f"{left}-{right}" if keep else left + right
