"""Citations in answers: only papers that tools returned in this conversation, as Markdown links."""

from __future__ import annotations

import re

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
