"""arXiv identifiers in the forms people write them."""

from __future__ import annotations

import re
from typing import NamedTuple

# New style (0704.0001 onwards): YYMM.NNNN or YYMM.NNNNN; old style: archive(.SUBJ)/YYMMNNN.
_NEW = r"\d{4}\.\d{4,5}"
_OLD = r"[a-z][a-z-]*(?:\.[A-Za-z]{2})?/\d{7}"
_ID_RE = re.compile(
    rf"^(?:arxiv:|https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/)?(?P<id>{_NEW}|{_OLD})(?:v(?P<v>\d+))?(?:\.pdf)?$",
    re.IGNORECASE,
)
# Inside a longer string, e.g. file names like "1706.03762v5.pdf" or "excerpt__2103.15348v2__x.pdf".
_NEW_IN_TEXT_RE = re.compile(rf"(?<![\d.])(?P<id>{_NEW})(?:v(?P<v>\d+))?(?![\d])")


class ArxivId(NamedTuple):
    paper_id: str  # without version: "1706.03762", "cs/0112017"
    version: int | None

    def __str__(self) -> str:
        return f"{self.paper_id}v{self.version}" if self.version else self.paper_id


def parse_arxiv_id(text: str) -> ArxivId | None:
    """Parse '2301.01234', '2301.01234v2', 'arXiv:2301.01234', 'cs/0112017', 'cs.AI/0112017' or an
    arxiv.org abs/pdf URL. Returns None when `text` is not an arXiv id."""
    m = _ID_RE.match(text.strip())
    if not m:
        return None
    pid = m.group("id")
    if not _valid_new_style(pid):
        return None
    if "/" in pid:
        archive, number = pid.split("/")
        # 'cs.AI/0112017' is the same paper as 'cs/0112017': the subject class is not part of the id.
        pid = f"{archive.split('.')[0].lower()}/{number}"
    version = int(m.group("v")) if m.group("v") else None
    return ArxivId(pid, version)


def _valid_new_style(pid: str) -> bool:
    """Numbers had 4 digits until 1412 and have 5 since 1501."""
    if "/" in pid:
        return True
    yymm, number = pid.split(".")
    return len(number) == (5 if int(yymm) >= 1501 else 4)


def submitted_year(paper_id: str) -> int | None:
    """The year an arXiv id was given ("2004.04906": 2020, "cs/9912017": 1999), which is when the
    paper first appeared; None for anything else (a local id)."""
    parsed = parse_arxiv_id(paper_id)
    if parsed is None:
        return None
    yy = int(parsed.paper_id.split("/")[-1][:2])
    return (1900 if yy >= 91 else 2000) + yy


def find_arxiv_id(text: str) -> ArxivId | None:
    """The first new-style arXiv id inside `text` (file names, stamps)."""
    for m in _NEW_IN_TEXT_RE.finditer(text):
        if _valid_new_style(m.group("id")):
            return ArxivId(m.group("id"), int(m.group("v")) if m.group("v") else None)
    return None


def abs_url(paper_id: str) -> str:
    return f"https://arxiv.org/abs/{paper_id}"


def stored_paper_id(text: str) -> str | None:
    """The id a paper is stored under, from any common form ('2301.01234v2', 'arXiv:2301.01234',
    'cs/0112017', an arxiv.org URL, or a local id 'local:<sha256 prefix>'); None if it is none."""
    text = text.strip()
    if text.startswith("local:"):
        return text
    parsed = parse_arxiv_id(text)
    return parsed.paper_id if parsed else None


# A chunk is named PAPER_ID#SEQ everywhere: in tool output, citations' passages and the web API.
def chunk_id(paper_id: str, seq: int) -> str:
    return f"{paper_id}#{seq}"


def parse_chunk_id(text: str) -> tuple[str, int] | None:
    """(stored paper id, seq) of 'PAPER_ID#N' in any form `stored_paper_id` takes; None otherwise."""
    paper, sep, seq = text.strip().rpartition("#")
    if not sep or not seq.isdigit():
        return None
    pid = stored_paper_id(paper)
    return (pid, int(seq)) if pid else None


def paper_of_chunk(chunk: str) -> str:
    """The paper part of a chunk id as written (no normalisation)."""
    return chunk.rpartition("#")[0]
