"""The grounding check of an answer (a fact-check, as debate moderators do): each sentence that
states something is compared with the passages the turn's tools returned, and the ones no passage
supports are flagged.

Cheap enough for every answer on 2 cores (no model call): a sentence is supported when a passage
holds most of its content words, or holds some of them and says the same by the MiniLM vectors;
one that only says the question back, when a passage holds (nearly) all its words.
A number the sentence states must appear in some passage: invented figures are the commonest
way a small model's answer goes wrong."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.events import Grounding
from agent.level import Embeds
from agent.reading import NOT_AFTER_ABBREVIATION
from corpus.ids import abs_url

# not after an abbreviation, as the reader splits: "(Eq. 4)" read as a sentence's end left "... the
# image representation y (Eq" uncited, and it was cited mid-reference: "(Eq [1]. 4) [1]." (a chat)
# Nor after a name's initial: "... Doug Downey and Daniel S. Weld wrote the CiteSee paper." was cut
# at "S." and its first part cited mid-name ("Daniel S [1]. Weld wrote ...", a chat)
_SENTENCE_END = re.compile(NOT_AFTER_ABBREVIATION + r"(?<!\b[A-Z]\.)(?<=[.!?])\s+(?=[A-Z\[(*\d])")
_LINK = re.compile(r"\[\[?\d+\]?\]\([^)]*\)|\[arXiv:[^\]]+\]\([^)]*\)|https?://\S+")
_WORD = re.compile(r"[a-z][a-z0-9-]{3,}|\d+(?:\.\d+)?%?")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?%?(?![\w])")
_STOP = frozenset(
    "this that these those with from into than then they them their there here have has been "
    "were which while where when what will would could should also such more most other some "
    "each only very well about paper papers study authors work approach method methods model "
    "models using used uses based however therefore thus first second third".split()
)
MIN_WORDS = 6  # shorter sentences (headings, "In short:") state nothing to check
# A claim whose content words are all the question's says the question back as a finding ("The
# game-playing algorithm was later used for video compression.", asked whether it was). Its meaning
# is the question's, close by MiniLM to any passage on the topic, so only a passage that holds
# (nearly) all its words supports it: that claim was passed with 3 of its 5 words in the sentences
# shown from MuZero, none of them on video compression.
ECHO_WORDS_HELD = 0.8


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


LIST_NUMBER = r"\d+[.)]"  # "2." or "2)" opening a list item
_MARKER = re.compile(rf"^\s*(?:[-*•>#]+|{LIST_NUMBER})\s+")
# A list item's label ("2. Model interpretability: LLMs can be difficult to ...") is its heading,
# as short as a heading: what is checked is what follows it. Checked whole, the label went when the
# model's gloss after it held in no passage, and the review's three challenges were cut to one.
_ITEM_LABEL = re.compile(r"(?:\*\*([^\n*:]+)(?:\*\*:|:\*\*)|([^\n:.!?*\[]+):)\s+(?=\S)")
ITEM_LABEL_WORDS = 5
# "the paper does not say", "not reported", "I could not look this up": what the passages or the
# assistant lack, not a finding
_ABSENCE = re.compile(
    r"\b(?:do|does|did)\s+not\s+(?:mention|say|state|specify|provide|report|discuss|describe|give|answer|cover|address)"
    r"|\bnot\s+(?:mentioned|specified|stated|reported|provided|discussed|described|given)\b"
    r"|\bno\s+(?:information|details?|mention)\b|\bcannot\s+answer\b"
    r"|\bI\s+(?:could|can|did|do|am|was)\s*(?:not|n't)\b|\bI\s+cannot\b",
    re.I,
)


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer that states something, and where it stands in the answer."""

    start: int
    end: int
    text: str  # without links or bullet marks: what is compared with the passages


def claim_spans(answer: str) -> list[Claim]:
    """The answer's sentences that state something: not headings, questions, links alone, the
    Sources line or statements of what the passages lack. A bullet is a sentence of its own."""
    found = []
    offset = 0
    for line in answer.splitlines(keepends=True):
        start, body = offset, line.rstrip("\n")
        offset += len(line)
        if body.strip().lower().startswith(("sources:", "cited:")):
            continue
        marker = _MARKER.match(body)
        begin = marker.end() if marker else 0
        label = _ITEM_LABEL.match(body, begin) if marker else None
        if label and len((label.group(1) or label.group(2)).split()) <= ITEM_LABEL_WORDS:
            begin = label.end()
        for piece in _pieces(body, begin):
            text = re.sub(r"\s+(?=[.,;:!?])", "", _LINK.sub("", body[piece[0] : piece[1]])).strip(" -*•#>")
            if len(text.split()) >= MIN_WORDS and not text.endswith("?") and not _ABSENCE.search(text):
                found.append(Claim(start + piece[0], start + piece[1], text))
    return found


def _pieces(line: str, begin: int) -> list[tuple[int, int]]:
    """Sentence spans of one line from `begin`, trailing spaces excluded."""
    spans, at = [], begin
    for gap in _SENTENCE_END.finditer(line, begin):
        spans.append((at, gap.start()))
        at = gap.end()
    spans.append((at, len(line.rstrip())))
    return [(a, b) for a, b in spans if b > a]


def claims(answer: str) -> list[str]:
    return [c.text for c in claim_spans(answer)]


def unsupported(
    answer: str, passages: list[str], embedder: Embeds, question: str = ""
) -> tuple[list[Claim], list[Claim]]:
    """The answer's claims, and those of them no passage supports. `question`: what was asked (a
    claim made of its words alone is held to its words, ECHO_WORDS_HELD)."""
    found = claim_spans(answer)
    if not found or not passages:
        return found, list(found)
    passage_words = [_content(p) for p in passages]
    numbers = {n for p in passages for n in _numbers(p)}
    passage_vectors = np.stack([embedder.embed_query(p[:1500]) for p in passages])
    asked = _content(question)
    missing = []
    for claim in found:
        words = _content(claim.text)
        overlap = max((len(words & pw) / len(words) for pw in passage_words), default=0.0) if words else 1.0
        similarity = float((passage_vectors @ embedder.embed_query(claim.text)).max())
        invented = any(n not in numbers for n in _numbers(claim.text) if len(n) > 1 or "." in n)
        echo = _echoes(words, asked)
        if invented or not (overlap >= ECHO_WORDS_HELD if echo else _holds(overlap, similarity)):
            missing.append(claim)
    return found, missing


def beside_the_point(found: list[Claim], missing: list[Claim], question: str) -> bool:
    """Whether the claims that hold are beside the point: the one that said the question back (its
    yes) holds in no passage, and none of the others shares a word with the question. Asked whether
    MuZero was later used for video compression, the model said it was, then quoted PonderNet's
    encoder layers: those hold, and answer nothing."""
    asked = _content(question)
    if not any(_echoes(_content(c.text), asked) for c in missing):
        return False
    return not any(_content(c.text) & asked for c in found if c not in missing)


def check(answer: str, passages: list[str], embedder: Embeds) -> Grounding:
    found, missing = unsupported(answer, passages, embedder)
    return Grounding(
        checked=len(found), supported=len(found) - len(missing), unsupported=[c.text for c in missing]
    )


_CITED = re.compile(r"\]\(https://arxiv\.org/abs/")


def attribute(answer: str, units: list[tuple[str, str]], embedder: Embeds) -> str:
    """Each claim that cites nothing gets the citation of the paper whose own words (`units`:
    paper id, text) support it best, when one does by the check's rule: a small model often
    names a paper's finding without citing it, and the reader then cannot tell where it is from.
    The links are numbered [[0]]: renumber them after."""
    uncited = [c for c in claim_spans(answer) if not _CITED.search(answer[c.start : c.end])]
    if not uncited or not units:
        return answer
    unit_words = [_content(text) for _, text in units]
    unit_numbers = [_numbers(text) for _, text in units]
    unit_vectors = np.stack([embedder.embed_query(text[:1500]) for _, text in units])
    for claim in sorted(uncited, key=lambda c: -c.start):
        words, stated = _content(claim.text), _numbers(claim.text)
        if not words:
            continue
        similarities = unit_vectors @ embedder.embed_query(claim.text)
        best, best_score = None, 0.0
        for i, (paper, _) in enumerate(units):
            overlap = len(words & unit_words[i]) / len(words)
            similarity = float(similarities[i])
            invented = any(n not in unit_numbers[i] for n in stated if len(n) > 1 or "." in n)
            if not invented and _holds(overlap, similarity) and overlap + similarity > best_score:
                best, best_score = paper, overlap + similarity
        if best is not None:
            end = claim.end - 1 if answer[claim.end - 1] in ".!?;:" else claim.end
            answer = f"{answer[:end]} [[0]]({abs_url(best)}){answer[end:]}"
    return answer


def _echoes(words: set[str], asked: set[str]) -> bool:
    return bool(words) and words <= asked


def _numbers(text: str) -> set[str]:
    return {n.rstrip("%").replace(",", "") for n in _NUMBER.findall(text)}


def _holds(overlap: float, similarity: float) -> bool:
    """The check's rule: most of the claim's content words, or some of them and the same meaning."""
    return overlap >= 0.6 or (overlap >= 0.35 and similarity >= 0.5) or similarity >= 0.7
