"""Citations in answers: only papers that tools returned in this conversation, as Markdown links."""

from __future__ import annotations

import re
from collections.abc import Callable

from corpus.ids import abs_url

# [arXiv:ID](url), arXiv:ID, arxiv.org/abs/ID, or a bare new-style id; optional version.
_CITE = re.compile(
    r"\[(?:arXiv:)?(?P<a>\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+/\d{7}(?:v\d+)?)\]\([^)]*\)"
    r"|(?:arXiv:\s?|https?://arxiv\.org/(?:abs|pdf)/)(?P<b>\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+/\d{7}(?:v\d+)?)"
    r"|(?<![\w./#])(?P<c>\d{4}\.\d{4,5})(?:v\d+)?(?![\w#])",
    re.I,
)


def _base(pid: str) -> str:
    return re.sub(r"v\d+$", "", pid)


def apply_citations(answer: str, allowed: set[str]) -> tuple[str, list[str], list[str]]:
    """Rewrite every citation of an allowed paper as [arXiv:ID](https://arxiv.org/abs/ID); drop the
    others with a visible flag. Returns (answer, cited ids in order, removed ids)."""
    cited: list[str] = []
    removed: list[str] = []

    def replace(m: re.Match) -> str:
        pid = _base(m.group("a") or m.group("b") or m.group("c"))
        if pid in allowed:
            if pid not in cited:
                cited.append(pid)
            return f"[arXiv:{pid}]({abs_url(pid)})"
        if m.group("c"):  # a bare number that is not a known paper may be anything (a version, a date)
            return m.group(0)
        if pid not in removed:
            removed.append(pid)
        return "[citation removed: not a paper found in this conversation]"

    text = _CITE.sub(replace, answer)
    # models sometimes wrap a link in brackets of their own: "[[arXiv:ID](url)]"
    text = re.sub(r"\[(\[arXiv:[^\]]+\]\([^)]+\))\]", r"\1", text)
    return text, cited, removed


_NUMBERED = re.compile(r"\[(\d{1,2})\](?!\()")
_LINK = re.compile(r"\[arXiv:(?P<id>[^\]]+)\]\((?P<url>https://arxiv\.org/abs/[^)]+)\)")


def number_citations(answer: str, sources: list[str], allowed: set[str]) -> tuple[str, list[str], list[str]]:
    """An answer's citations as numbered links, [1], [2], ... in the order they first appear.

    The model cites the numbered `sources` it was shown ([2]) or writes arXiv ids; both become
    links to arXiv numbered by first appearance, so the answer's numbers match its source cards
    and "the second one" means the second paper the answer named. Citations of papers no tool
    returned in the conversation are removed and flagged. Returns (answer, cited ids, removed)."""

    def by_number(m: re.Match) -> str:
        n = int(m.group(1))
        if 1 <= n <= len(sources):
            return f"[arXiv:{sources[n - 1]}]({abs_url(sources[n - 1])})"
        return m.group(0)

    text, cited, removed = apply_citations(_NUMBERED.sub(by_number, answer), allowed)
    number = {pid: n for n, pid in enumerate(cited, 1)}
    text = _LINK.sub(lambda m: f"[[{number[m['id']]}]]({m['url']})" if m["id"] in number else m[0], text)
    text = re.sub(r"(\[\[\d+\]\]\([^)]+\))(?:\s*\1)+", r"\1", text)  # "[1] [1]" -> "[1]"
    return text, cited, removed


_NUMBERED_LINK = re.compile(r"\[\[\d+\]\]\((?P<url>https://arxiv\.org/abs/(?P<id>[^)]+))\)")


def renumber(answer: str) -> tuple[str, list[str]]:
    """Numbered links renumbered by first appearance, after a revision left some out or added
    some: the numbers keep matching the source cards. Returns (answer, cited ids in order)."""
    cited: list[str] = []
    for m in _NUMBERED_LINK.finditer(answer):
        if m["id"] not in cited:
            cited.append(m["id"])
    text = _NUMBERED_LINK.sub(lambda m: f"[[{cited.index(m['id']) + 1}]]({m['url']})", answer)
    return re.sub(r"(\[\[\d+\]\]\([^)]+\))(?:\s*\1)+", r"\1", text), cited


def sources_line(paper_ids: list[str], title: Callable[[str], str], numbered: bool = True) -> str:
    """The line under an answer that names the papers it was written from, as numbered links with
    their titles (`numbered`: [[1]], [[2]], ...; else [[0]], for a renumbering after). Titles on a
    Sources line are not claims: the grounding check leaves the line out."""
    numbers = range(1, len(paper_ids) + 1) if numbered else [0] * len(paper_ids)
    named = (f"[[{n}]]({abs_url(p)}) {title(p)}".rstrip() for n, p in zip(numbers, paper_ids, strict=True))
    return "Sources: " + ", ".join(named)
