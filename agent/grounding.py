"""The grounding check of an answer (a fact-check, as debate moderators do): each sentence that
states something is compared with the passages the turn's tools returned, and the ones no passage
supports are flagged.

Cheap enough for every answer on 2 cores (no model call): a sentence is supported when a passage
holds most of its content words, or holds some of them and says the same by the MiniLM vectors.
A number the sentence states must appear in some passage: invented figures are the commonest
way a small model's answer goes wrong."""

from __future__ import annotations

import re

import numpy as np

from agent.events import Grounding
from agent.level import Embeds

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(*\d])")
_BULLET = re.compile(r"\n\s*(?=[-*•]\s|\d+[.)]\s)")
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


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def claims(answer: str) -> list[str]:
    """The answer's sentences that state something: not links alone, not the Sources line."""
    prose = "\n".join(
        line for line in answer.splitlines() if not line.strip().lower().startswith(("sources:", "cited:"))
    )
    sentences = []
    # a bullet is a sentence of its own, full stop or not
    parts = [p for block in _BULLET.split(prose) for p in _SENTENCE_END.split(block.replace("\n", " "))]
    for part in parts:
        text = _LINK.sub("", part).strip(" -*•#>")
        if len(text.split()) >= MIN_WORDS and not text.endswith("?"):
            sentences.append(text)
    return sentences


def check(answer: str, passages: list[str], embedder: Embeds) -> Grounding:
    sentences = claims(answer)
    if not sentences:
        return Grounding(checked=0, supported=0)
    if not passages:
        return Grounding(checked=len(sentences), supported=0, unsupported=sentences)
    passage_words = [_content(p) for p in passages]
    numbers = {n.rstrip("%").replace(",", "") for p in passages for n in _NUMBER.findall(p)}
    passage_vectors = np.stack([embedder.embed_query(p[:1500]) for p in passages])
    unsupported = []
    for sentence in sentences:
        words = _content(sentence)
        overlap = max((len(words & pw) / len(words) for pw in passage_words), default=0.0) if words else 1.0
        similarity = float((passage_vectors @ embedder.embed_query(sentence)).max())
        stated = {n.rstrip("%").replace(",", "") for n in _NUMBER.findall(sentence)}
        invented = any(n not in numbers for n in stated if len(n) > 1 or "." in n)
        supported = overlap >= 0.6 or (overlap >= 0.35 and similarity >= 0.5) or similarity >= 0.7
        if invented or not supported:
            unsupported.append(sentence)
    return Grounding(
        checked=len(sentences), supported=len(sentences) - len(unsupported), unsupported=unsupported
    )
