"""The one revision of an answer after its grounding check: the sentences no passage supports are
left out of the answer shown (and listed beside it, so nothing is hidden), and when too little of
the draft holds, the passages' own sentences closest to the question are quoted instead, when
they are close to it; else the answer says so and names the papers read.

No model call: a second generation costs 15-20 s on 2 cores, and a 1.5B model rewriting from the
same passages makes the same mistakes again (most unsupported sentences are what it remembers or
guesses, not what it misread)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from agent.citations import sources_line
from agent.grounding import LIST_NUMBER, Claim
from agent.level import Embeds
from corpus.ids import abs_url

QUOTES = 2  # passage sentences quoted when the draft does not hold
# A passage sentence is quoted only this close in meaning to the question (MiniLM cosine). In the
# two full runs of the grounded benchmark (380 answers), the 4 quote blocks that held a fact asked
# had a best quote at 0.65-0.81; of the 67 that held none, 58 were below 0.6: opening sentences of
# unrelated papers ("Deeper neural networks are more difficult to train." for a ViT question).
QUOTE_MIN_SIMILARITY = 0.6
MAX_CANDIDATES = 150  # passage sentences compared with the question (one MiniLM encode each)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_LINKED = re.compile(r"\[\[\d+\]\]\([^)]*\)")
_ITEM_NUMBER = re.compile(rf"^\s*{LIST_NUMBER}(?=\s|$)")  # "2." left of an item cut whole
_SOURCES_LINE = re.compile(r"^\s*\**(?:sources|cited)\**:.*$", re.I | re.M)
NO_ANSWER = "I could not write an answer the passages I read support; this is what they say:"
NOTHING_CLOSE = (
    "I could not write an answer the passages I read support, and none of their sentences is close "
    "to the question."
)


@dataclass(frozen=True)
class Revision:
    answer: str
    left_out: list[str]  # the draft's sentences no passage supported
    quoted: bool  # passage sentences were quoted because too little of the draft held


def revise(
    answer: str,
    missing: list[Claim],
    kept: int,
    quotable: list[tuple[str, str]],
    read: str,
    question: str,
    embedder: Embeds,
    title: Callable[[str], str] = lambda paper: "",
) -> Revision:
    """`missing`: the draft's unsupported claims; `kept`: how many of its claims hold;
    `quotable`: (paper id, text) of the papers to quote from; `read`: what the model was shown;
    `title`: a paper's title, to say what was read when no sentence of it is worth quoting."""
    if not missing:
        return Revision(answer, [], False)
    text = _SOURCES_LINE.sub("", _cut(answer, missing))
    # quoted (or the papers named) only when most of the draft fails
    candidates = _candidates(quotable, read) if len(missing) > kept else []
    quotes = best_sentences(question, candidates, embedder, QUOTES)
    if quotes:
        block = "\n".join(f'- "{sentence}" [[0]]({abs_url(paper)})' for paper, sentence in quotes)
        text = f"{NO_ANSWER}\n{block}" if kept == 0 else f"{text.rstrip()}\n\nWhat the passages say:\n{block}"
    elif kept == 0 and not candidates:
        return Revision(answer, [], False)  # nothing to quote: the draft stays, flagged sentence by sentence
    elif kept == 0:
        # sentences beside the point are not quoted as if they answered: say what was read instead
        read_papers = list(dict.fromkeys(paper for paper, _ in candidates))[:QUOTES]
        text = f"{NOTHING_CLOSE}\n\n{sources_line(read_papers, title, numbered=False)}"
    return Revision(_tidy(text), [c.text for c in missing], bool(quotes))


def _cut(answer: str, claims: list[Claim]) -> str:
    cut = answer
    for claim in sorted(claims, key=lambda c: -c.start):
        # a list item's label stays, without the colon of the gloss cut after it
        head = _LABEL_COLON.sub(r"\1", cut[: claim.start])
        cut = head + cut[claim.end :]
    if _DANGLING_LEAD.match(answer):  # the answer's own opening: it leans on the question
        return cut
    return _DANGLING_LEAD.sub(lambda m: m.group(1).upper(), cut, count=1)


_LABEL_COLON = re.compile(r"(?<=\S):(\**)[ \t]*$")


# The sentence after a cut opening that leaned on it: "This is because MuZero ... does not rely on
# knowledge of the game rules" once "The game-playing one does not need to be told the rules."
# was left out (2 of the 190 benchmark answers); "Of these, ITC-2021 ..." once the five
# competitions the question named were (a blind probe)
_DANGLING_LEAD = re.compile(
    r"^\s*(?:(?:This|That) (?:is (?:because|why)|means(?: that)?)|(?:Of|Among) (?:these|them|those),?) (\w)"
)


def _tidy(text: str) -> str:
    """Lines left with nothing but bullet marks or links go; so do doubled spaces and blank runs."""
    lines = [
        re.sub(r"(?<=\S) {2,}", " ", line).rstrip()
        for line in text.splitlines()
        if not line.strip() or re.sub(r"[\W_]", "", _LINKED.sub("", _ITEM_NUMBER.sub("", line)))
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _candidates(quotable: list[tuple[str, str]], read: str) -> list[tuple[str, str]]:
    """(paper id, sentence): the passages' whole prose sentences, verbatim, of those inside `read`
    (what the turn's model was shown: observations are cut short)."""
    read = " ".join(read.split())
    seen: set[str] = set()
    candidates: list[tuple[str, str]] = []
    for paper, text in quotable:
        for sentence in _SENTENCE.split(" ".join(text.split())):
            words = sentence.split()
            letters = sum(ch.isalpha() for ch in sentence)
            whole = sentence[:1].isupper() and sentence.endswith((".", "!", "?"))
            # prose, not a table row, a formula or a reference list
            prose = 8 <= len(words) <= 60 and letters >= 0.7 * len(sentence)
            if whole and prose and sentence not in seen and sentence in read:
                seen.add(sentence)
                candidates.append((paper, sentence))
    return candidates[:MAX_CANDIDATES]


def best_sentences(
    question: str, candidates: list[tuple[str, str]], embedder: Embeds, n: int
) -> list[tuple[str, str]]:
    """The `n` candidate sentences closest in meaning to the question, of those close enough to
    be worth quoting."""
    if not candidates:
        return []
    target = embedder.embed_query(question)
    scores = np.array([float(embedder.embed_query(s) @ target) for _, s in candidates])
    order = [i for i in np.argsort(-scores, kind="stable")[:n] if scores[i] >= QUOTE_MIN_SIMILARITY]
    return [candidates[i] for i in order]
