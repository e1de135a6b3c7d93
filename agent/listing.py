"""A listing ("which papers here cover X?") written without a model: the search's papers, each kept
only when its own abstract answers the question, shown with the abstract's sentence that does.

The step-by-step agent answered these from the search listing in 35-78 s, padded with papers that
do not fit (each given a reason its abstract does not state), once by copying the tool's raw output.
Here each paper is weighed on its own words, and what the answer says of it is its own sentence."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from agent.reading import Embeds, sentence_scores, split_sentences
from corpus.ids import abs_url
from corpus.models import PaperRecord

# A paper is listed when its fit reaches LIST_FLOOR. Its fit: its best abstract sentence's score
# (agent.reading.sentence_scores), plus SEARCH_WEIGHT x its search score over the best one's, less
# RANK_STEP per place below the first. Calibrated without a model on the grounded benchmark's 22
# questions that ask for papers (the search's first 5 papers each, 49 gold papers): listed papers
# that fit 0.86, gold papers listed 0.90 (floor 0.62: 0.87 / 0.84); leave-one-question-out about
# 0.84 / 0.84. The abstract alone gave 0.77 / 0.84 at its best floor, the search's 5 as they come
# 0.53 / 1.00.
LIST_FLOOR = 0.61
SEARCH_WEIGHT = 0.2
RANK_STEP = 0.05


# an abstract taken from a PDF keeps its line-break hyphens ("ef- ficient", "mu- sic"); not a
# hyphen left hanging before a conjunction ("zero- and few-shot", "small- to medium-sized"),
# which had been shown as "zeroand few-shot"
_BROKEN_WORD = re.compile(r"(?<=[a-z])- (?=[a-z])(?!(?:and|or|nor|to|versus)\b)")


def abstract_text(paper: PaperRecord) -> str:
    """The abstract as shown: ligatures unfolded (NFKC), words hyphenated across lines joined."""
    return _BROKEN_WORD.sub("", unicodedata.normalize("NFKC", paper.abstract or ""))


@dataclass(frozen=True)
class Listed:
    paper: PaperRecord
    sentence: str  # the abstract's sentence closest to the question ("" when it has no abstract)
    fit: float


def weigh(
    question: str,
    found: list[PaperRecord],
    search_scores: list[float],
    embedder: Embeds,
    question_vector: np.ndarray | None = None,
) -> list[Listed]:
    """Each paper of a search, in its order, with its abstract's sentence that best answers the
    question and its fit. A paper without an abstract is weighed on its title."""
    candidates = [split_sentences(abstract_text(p)) for p in found]
    texts = [t for paper, own in zip(found, candidates, strict=True) for t in own or [paper.title]]
    scores = iter(sentence_scores(question, texts, embedder, question_vector))
    top = max(search_scores, default=0.0) or 1.0
    listed = []
    for i, (paper, own) in enumerate(zip(found, candidates, strict=True)):
        score, best = max(((next(scores), t) for t in own or [paper.title]), key=lambda x: x[0])
        fit = score + SEARCH_WEIGHT * search_scores[i] / top - RANK_STEP * i
        listed.append(Listed(paper=paper, sentence=best if own else "", fit=fit))
    return listed


def keep(listed: list[Listed], floor: float = LIST_FLOOR) -> list[Listed]:
    """The papers that fit, in the search's order; none when no paper reaches the floor (on the
    benchmark every answerable question's best paper had a fit of 0.71 or more)."""
    return [x for x in listed if x.fit >= floor]


def listing_answer(kept: list[Listed], dropped: int) -> str:
    """One line per paper: its citation, title, first author and year, and its own sentence."""
    lines = ["These papers in the corpus fit your question:" if len(kept) > 1 else
             "This paper in the corpus fits your question:"]  # fmt: skip
    for n, x in enumerate(kept, 1):
        p = x.paper
        who = f"{p.authors[0]}{' et al.' if len(p.authors) > 1 else ''}" if p.authors else ""
        when = str(p.published.year) if p.published else ""
        byline = ", ".join(part for part in (who, when) if part)
        line = f"- [[{n}]]({abs_url(p.paper_id)}) **{p.title}**" + (f" ({byline})" if byline else "")
        if x.sentence:
            line += f": “{x.sentence}”"
        lines.append(line)
    if dropped:
        papers = "paper" if dropped == 1 else "papers"
        lines.append(f"\n(Left out: {dropped} more {papers} the search found, whose abstracts do not match.)")
    return "\n".join(lines)
