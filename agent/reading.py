"""Narrow reading, built for a small model: a paper's passages -> the few sentences that answer the
question -> a short prompt of those numbered sentences.

A 1.5B model shown 2,400 characters of mixed passages from several papers stated the asked fact in
1 of 14 single-paper questions on papers it had never seen; with the right three sentences in front
of it, it can copy a number or a reason. So what the model reads is chosen here, in plain code the
tests can pin (MiniLM similarity, the question's exact terms, numbers when it asks for a quantity),
and the model is asked only to write 1-3 sentences from it."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from agent.coverage import declines
from agent.level import LEVEL_STYLE
from corpus.models import ChunkHit

PASSAGES = 8  # a paper's passages whose sentences are weighed
SENTENCES = 8  # sentences a single-paper answer is written from
ANSWER_SENTENCES = 3  # a single-paper answer's length, as its prompt asks
# per paper, when several papers are read for one question: each paper is read in a call of its
# own. 3 held the key facts of the benchmark's 12 cross-paper questions 8 of 28 times (every fact
# of a question for none), 6 hold 17 (5 questions) (`--evidence 8 --kinds cross`). The abstract's
# best 2 as well held 19 (6), but the model then copied the abstracts' opening sentences and gave
# a paper whose body did not answer a bullet from its abstract: not kept.
LISTED_SENTENCES = 6
# A follow-up about a paper in play ("is the attention in the other one an approximation?") mostly
# asks what its abstract claims: the listing showed the abstract, and the person asks about what
# they read there. Of the benchmark's 67 key facts of one-paper follow-ups, 48 are in the abstract,
# 18 of them missing from the 8 sentences chosen from the passages (where the body words the
# claim less plainly). Offline, turns with every key fact among the chosen sentences: 22 of 40
# with none added, 27 / 28 / 30 with the abstract's best 1 / 2 / 3 added, 22 with 2 more body
# sentences instead; one-paper first questions (written from the body) 63 -> 64 of 96 with 2.
# Answered by the model, the 16 conversations' follow-ups right 18 -> 20 of 32 with 4 in place of
# 2 (the bird survey's challenge, the music paper's 19.6%, PaSa's RL training); over all turns,
# those with every fact in view 121 / 122 / 123 of 170 with 2 / 3 / 4, none lost.
FOLLOW_UP_ABSTRACT_SENTENCES = 4
ABSTRACT_SEQ = -1  # an abstract sentence's place: before the paper's first chunk
MAX_SENTENCE_CHARS = 420  # a longer "sentence" is a table or a run-on extraction: cut
# Weights of the sentence score: meaning (cosine of MiniLM vectors, ~0.1-0.8), the share of the
# question's rarer words the sentence holds, a number when one is asked for, less for a table row.
# Chosen on the grounded benchmark's 303 key facts, read from each fact's own paper (bench/grounded.py
# --evidence): key facts inside the chosen sentences 0.58 with 6 passages, 6 sentences and a term
# weight of 0.35; 0.70 with 8, 8 and 0.8 (the passages themselves hold 0.93; 10 sentences: 0.76
# for a longer prompt).
TERM_WEIGHT = 0.8
NUMBER_BONUS = 0.08
TABLE_PENALTY = 0.1
# Less for a sentence about other papers' work: it cites them and says nothing of "we" or "this
# paper". Asked "what hardware was it trained on?" of PaLM, the 1.5B model answered with
# Megatron's 2240 A100 GPUs and Gopher's TPU v3 Pods from the related-work sentence beside PaLM's
# own "6144 TPU v4 chips". Key facts inside the 8 chosen sentences (--evidence 8, 303 facts):
# 212 with none, 215 / 218 / 215 / 214 with 0.1 / 0.2 / 0.3 / 0.5.
OTHERS_PENALTY = 0.2
_RRF_K = 60

# not after an abbreviation: "outperforms BM25 by a large margin (65.2% vs. 42.9% ...)" was cut
# after "vs.", and the model, shown "(65.2% vs.", wrote the comparison without its other number
_ABBREVIATIONS = ("vs", "e.g", "i.e", "al", "Fig", "Figs", "fig", "Eq", "Eqs", "eq", "Sec", "Tab", "cf",
                  "approx", "resp", "No", "Ref", "Refs", "Eqn", "Dr", "Prof", "St", "ca")  # fmt: skip
NOT_AFTER_ABBREVIATION = "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS)
_SPLIT = re.compile(NOT_AFTER_ABBREVIATION + r"(?<=[.!?])\s+(?=[A-Z(\[\"'“0-9])")
# a sentence mark the model writes: [2], [1, 3], [2-4]
_MARK = r"\[\d{1,2}(?:\s*[,-]\s*\d{1,2})*\]"
# the end of a sentence the model wrote, with the marks it put after the full stop, once the next
# sentence has begun; or a line's end where the next line begins a sentence (the model sometimes
# writes one claim per line without a full stop: six lines came out where three were asked)
# ("... are [1] and [3]. [1] states that ...": a mark the model made the next sentence's subject
# begins that sentence; read as the first one's, the two were one, and the filler first half
# survived every filter of the bullets)
# (not the stop of a list item's number: "are:\n1. Data quality ...\n2. Model ..." was cut at "2.",
# each number counted as a sentence of its own; a chat of 2026-12-07)
_LIST_NUMBER = r"\d{1,2}[.)][ \t]"  # "1. ", "2) " opening a line
_ANSWER_SENTENCE_END = re.compile(
    rf"(?<!^\d)(?<!^\d\d)(?<!\n\d)(?<!\n\d\d)[.!?]{NOT_AFTER_ABBREVIATION}(?:[ \t]*{_MARK})*"
    rf"(?=\s+(?:{_MARK}[ \t]*)?[A-Z\"“(]|\s+{_MARK}[ \t]+[a-z]|[ \t]*\n\s*{_LIST_NUMBER})"
    rf"|(?<=[\w)\]%])(?=[ \t]*\n\s*(?:[-*•][ \t]*|{_LIST_NUMBER}[ \t]*|{_MARK}[ \t]*)?[A-Z\"“(])"
)
_WORD = re.compile(r"[a-z][a-z0-9-]+|\d+(?:\.\d+)?")
_NUMBER = re.compile(r"\d")
# a sentence that leans on the one before it ("This ...", "They ...") is shown with it
_LEANS_BACK = re.compile(r"^(?:This|These|That|Those|It|Its|They|Their|Such|Here|Thus|Hence|However)\b")
_QUANTITY = re.compile(
    r"\b(?:how\s+(?:many|much|large|big|long|fast|often|well|accurate)|what\s+(?:number|size|percentage|fraction|share)"
    r"|number\s+of|size|rank|accuracy|error|score|rate|percent\w*|speed-?up|times|parameters|epochs?"
    r"|fid|bleu|f1|auc|perplexity|results?|performance|compare[ds]?)\b",
    re.I,
)
_STOP = frozenset(
    "the and for with that this what which how why does did do are was were is its their there from into "
    "than then they them these those have has had been can could would should will about paper papers "
    "study authors work method approach model use used using when where who whom whose also such more "
    "most other some each only very well between both over under after before while being our your "
    "you any all not but one two".split()
)


@dataclass(frozen=True)
class Sentence:
    paper_id: str
    chunk_id: str
    seq: int  # the chunk's place in the paper
    at: int  # the sentence's place in its chunk
    text: str
    score: float


# a citation of other work: "(Smith et al., 2022)", "(Du et al., 2021; Thoppilan et al., 2022)",
# "[12]", "[4, 7-9]", "Finn et al."
_CITES = re.compile(r"\([^()]{0,120}?\b(?:19|20)\d\d[a-z]?\)|\[\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]|\bet\s+al\.")
# the paper's own voice
_OWN = re.compile(r"\b(?:we|our|ours|us|this\s+(?:paper|work|study|article))\b", re.I)


def of_others(sentence: str, own: Sequence[str] = ()) -> bool:
    """Whether a sentence tells of other papers' work: it cites some and not in the paper's own
    voice ("Megatron-Turing NLG 530B (Smith et al., 2022) was trained on 2240 A100 GPUs ...", not
    "Unlike MAML [4], we ..."). `own`: the names of the paper's own system (own_names), which
    speak for it as "we" does ("ZeRO powers the largest language model ..., Turing-NLG [9].")."""
    if not _CITES.search(sentence) or _OWN.search(sentence):
        return False
    return not any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", sentence) for name in own)


# a coined name in a title: "ZeRO", "TableFormer", "FlashAttention", "PaSa", "RWKV", "GPT-3" (not a
# plural acronym, "RNNs", a short one, "LLM", or a hyphenated pair of words, "Memory-Efficient")
_COINED = re.compile(
    r"^(?!.*-\D)(?![A-Z]+s$)(?:[A-Z]{4,}|[A-Z]\w*[a-z]\w*[A-Z]\w*|[A-Z]\w*[A-Z]\w*[a-z]\w*|[A-Z]+-?\d\w*)$"
)
_TITLE_HEAD_WORDS = 3  # "Primer: Searching for ...", "Deep Speech 2: ..."


def title_head(title: str) -> str:
    """A title's short head before its colon ("Primer" of "Primer: Searching for ...", "Deep
    Speech 2"); "" when it has none."""
    head, colon, _ = title.partition(":")
    return head.strip() if colon and 0 < len(head.split()) <= _TITLE_HEAD_WORDS else ""


def own_names(title: str) -> list[str]:
    """The names a paper gives its own system, read from its title: the head before a colon when
    short ("Primer", "MuZero"), and coined words ("ZeRO", "TableFormer")."""
    head = title_head(title)
    names = [head] if head else []
    names += [w for w in re.split(r"[\s:,()]+", title) if _COINED.match(w)]
    return list(dict.fromkeys(n for n in names if len(n) >= 3))


def terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if (w not in _STOP and len(w) > 2) or w.isdigit()]


def asks_quantity(question: str) -> bool:
    return bool(_QUANTITY.search(question))


# not prose of the paper: a reference-list entry, a URL, the authors' addresses. An e-mail
# address, not any "@": "by 37.78% in recall@20 and 39.90% in recall@50" is the sentence a
# follow-up asked for, and "P@1", "Hits@10", "mAP@0.5" are how results are written.
_NOT_PROSE = re.compile(
    r"arXiv:\s?\d|https?://|www\.|\bdoi\b|@(?=[a-z][\w-]*\.[a-z])|\bIn Proceedings\b|\bProc\."
    r"|\bpp\.\s?\d|\bvol\.\s?\d"
    r"|\b(?:19|20)\d\d[a-z]?\.\s*$|^\[\d+\]|\bDepartment of\b|\bUniversity\b.*\bUniversity\b",
    re.I,
)


# A section heading the PDF's text runs into the sentence after it ("2.2 DocLayNet dataset The
# DocLayNet dataset addresses ...", "4 SYSTEM DESIGN Motivated by ..."): 3% of the benchmark
# corpus's sentences. The model copied such sentences into its answers, heading and all, and
# the heading's number read as a quantity. The sentence begins at the first word that opens
# sentences (not the heading's own first word), at the next heading's number, or after a
# heading in capitals; a heading with none of these within its first words is left as it is.
_SECTION_NUMBER = r"(?:[1-9]\d?(?:\.\d{1,2}){0,3}\.?|[A-H]\.\d{1,2}(?:\.\d{1,2})?\.?)"
_HEADING_NUMBER = re.compile(rf"^{_SECTION_NUMBER}\s+(?=[A-Z])")
_SECTION_NUMBER_WORD = re.compile(_SECTION_NUMBER)
_OPENERS = frozenset(
    "The We In To For Our This These Those A An As Each Given Here Since While Instead Besides "
    "Similarly Suppose Motivated After Before One Many Most It Its There Such Unlike Although Because "
    "First Finally With Following Using Let Consider Recent Previous Prior Existing Table Figure Fig "
    "Note Thus However When If Over Another Both All Several Some Other Despite During "
    "Compared Inspired Next Then Now At On By From Of Throughout Overall".split()
)
_HEADING_WORDS = 10


def _letters(words: list[str]) -> int:
    return sum(c.isalpha() for w in words for c in w)


def without_heading(sentence: str) -> str:
    """The sentence without a section heading run into its start ("4 Experiments We evaluate
    ..." is "We evaluate ..."); a list item's bare number ("48 These examples ...") goes too."""
    text = sentence
    for _ in range(3):  # "2 Method 2.1 Models We present ..."
        number = _HEADING_NUMBER.match(text)
        if not number:
            break
        words = text[number.end() :].split(" ")
        cut = 0 if words[0] in _OPENERS else None
        capitals = words[0].isupper()
        for i, word in enumerate(words[1 : _HEADING_WORDS + 1], 1):
            next_heading = (
                _SECTION_NUMBER_WORD.fullmatch(word) and i + 1 < len(words) and words[i + 1][:1].isupper()
            )
            if word in _OPENERS or next_heading:
                cut = i
                break
            if capitals and word[:1].isupper() and not word.isupper() and _letters(words[:i]) >= 6:
                # "B.2 VECTOR STORE UPSTREAM Vector store D is populated ..." (not an acronym:
                # "3.2.3 UCSD Crowd Counting The UCSD crowd counting dataset ...")
                cut = i
                break
            capitals = capitals and (word.isupper() or not word[:1].isalpha())
        if cut is None:
            break
        text = " ".join(words[cut:])
    return text


# a footnote mark or a section number the PDF glued to a full stop: "... fewer computational
# resources to train.1" (ViT's abstract, shown so in a listing), "... on a 4-point scale.5 System
# Design Initial feedback ..." (answered so); not "Fig.1" or "Sec.2", whose stop is an
# abbreviation's
_GLUED_TO_STOP = re.compile(
    r"(?<=[a-z]{3}[.!?])(?<!fig\.)(?<!sec\.)(?<!tab\.)(?<!ref\.)(?<!eqn\.)(?<!ver\.)(\d{1,2})(?=\s|$|[”\"’)])"
)


_WORDY = re.compile(r"[A-Za-z][a-z-]+[,.;:]?")  # a plain word, not a number, symbol or name-code
PROSE_SHARE = 0.6  # of the words a table's rows run into, the share of plain words that makes prose
# a caption: alone it outranked the sentence that answers (FlashAttention's Figure 1 caption, its
# rows cut off, took the place of "We store the softmax normalization factor ..." among the 8)
_CAPTION_NAME = r"(?:Figure|Fig\.|Table)\s*S?\d+"  # "Table 2", "Fig. 3", "Table S2"
_CAPTION = re.compile(rf"\b{_CAPTION_NAME}\s*[:|]", re.I)


def _cut(part: str) -> str:
    """An overlong "sentence" cut to MAX_SENTENCE_CHARS: its opening, or, when the opening is a
    table's rows, the prose the rows run into (the words after the last run of three or more
    non-words that six or more words follow). Table 2 of "Attention Is All You Need" runs on, with
    no sentence break, into "Label Smoothing During training, we employed label smoothing of value
    εls = 0.1 [36]": the rows were kept and the only sentence that gives the value was lost. With
    no such prose, or a caption in it, the rows' end is kept rather than their opening."""
    head = part[: MAX_SENTENCE_CHARS - 1].rsplit(" ", 1)[0]
    if not _tabular(head):
        return head + "…"
    tokens = part.split()
    wordy = [bool(_WORDY.fullmatch(t)) for t in tokens]
    after = [0] * (len(tokens) + 1)  # plain words from each token on
    for i in range(len(tokens) - 1, -1, -1):
        after[i] = after[i + 1] + wordy[i]
    for i in range(len(tokens) - 3, -1, -1):
        if not any(wordy[i : i + 3]) and after[i + 3] >= 6:
            start = next(j for j in range(i + 3, len(tokens)) if wordy[j])
            tail = " ".join(tokens[start:])
            prose = after[start] >= PROSE_SHARE * (len(tokens) - start)
            if prose and len(tail) < MAX_SENTENCE_CHARS and not _CAPTION.search(tail):
                return tail
            break
    return "…" + part[-(MAX_SENTENCE_CHARS - 1) :].split(" ", 1)[-1]


def split_sentences(text: str) -> list[str]:
    """A passage's sentences worth reading: prose, not references, URLs or the front page's
    affiliations (the reader chose a bibliography entry as what a paper says on a topic), each
    without a section heading run into it."""
    out = []
    for part in _SPLIT.split(_GLUED_TO_STOP.sub(r" \1", " ".join(text.split()))):
        part = without_heading(part.strip())
        if len(part.split()) < 4 or _NOT_PROSE.search(part):
            continue
        if len(part) > MAX_SENTENCE_CHARS:
            part = _cut(part)
        out.append(part)
    return out


def _idf(docs: Sequence[set[str]]) -> dict[str, float]:
    df: dict[str, int] = {}
    for doc in docs:
        for word in doc:
            df[word] = df.get(word, 0) + 1
    n = len(docs)
    return {w: math.log(1 + n / (1 + c)) for w, c in df.items()}


def _term_share(question_terms: list[str], doc: set[str], idf: dict[str, float]) -> float:
    """The idf-weighted share of the question's words that `doc` holds (rare words count most)."""
    wanted = {w: idf.get(w, math.log(1 + len(idf) + 1)) for w in question_terms}
    total = sum(wanted.values())
    return sum(v for w, v in wanted.items() if w in doc) / total if total else 0.0


# marks of a reference list: "194(1):385", ", 2012. ", "pages 329-351", "In Proceedings", "Journal of"
# (not URLs: prose with footnotes holds several)
_BIBLIOGRAPHIC = re.compile(
    r"\b\d+\s?\(\d+\)\s?:\s?\d+|,\s(?:19|20)\d\d[a-z]?\.(?=\s|$)|\bpages?\s\d+\s?[–-]|\bpp\.\s?\d"
    r"|\bIn\s(?:Proceedings|Advances)\b|\bProc\.\s|\bvol(?:ume|\.)\s?\d|\bdoi:|\barXiv:\s?\d"
    r"|\b(?:Journal|Transactions|Conference|Workshop|Symposium)\s(?:of|on)\b",
    re.I,
)
BIBLIOGRAPHY_MARKS = 4  # a ~1,000-character passage of prose holds one or two at most


def bibliography(text: str) -> bool:
    """Whether a passage is part of the reference list: its "sentences" are other papers' titles,
    which the reader once listed as what a timetabling survey says about timetabling."""
    return len(_BIBLIOGRAPHIC.findall(text)) >= BIBLIOGRAPHY_MARKS


def best_passages(question: str, chunks: list[ChunkHit], k: int = PASSAGES) -> list[ChunkHit]:
    """A paper's passages for the question: its chunks ranked by their vectors' similarity (the
    hits' scores) and by the question's words, fused by reciprocal rank; top k in reading order.
    The reference list is not read."""
    chunks = [c for c in chunks if not bibliography(c.text)] or chunks
    if len(chunks) <= k:
        return sorted(chunks, key=lambda c: c.seq)
    words = terms(question)
    docs = [set(terms(c.text)) for c in chunks]
    idf = _idf(docs)
    lexical = [_term_share(words, d, idf) for d in docs]
    by_dense = sorted(range(len(chunks)), key=lambda i: -chunks[i].score)
    by_terms = sorted(range(len(chunks)), key=lambda i: -lexical[i])
    fused = {i: 0.0 for i in range(len(chunks))}
    for ranking in (by_dense, by_terms):
        for rank, i in enumerate(ranking):
            fused[i] += 1.0 / (_RRF_K + rank)
    top = sorted(fused, key=lambda i: -fused[i])[:k]
    return sorted((chunks[i] for i in top), key=lambda c: c.seq)


class Embeds(Protocol):  # the part of corpus.embedder.Embedder this module uses
    def embed(self, texts: list[str]) -> np.ndarray: ...
    def embed_query(self, text: str) -> np.ndarray: ...


def sentence_scores(
    question: str,
    texts: list[str],
    embedder: Embeds,
    question_vector: np.ndarray | None = None,
    text_vectors: np.ndarray | None = None,
    own: Sequence[str] = (),
) -> list[float]:
    """How well each text answers the question: MiniLM cosine, plus the idf-weighted share of the
    question's words it holds (idf over these texts), plus a number when a quantity is asked,
    less for a table row or a sentence about other papers' work. `text_vectors`: the texts'
    vectors when the caller has them; `own`: the paper's names for its own system (own_names)."""
    if not texts:
        return []
    target = embedder.embed_query(question) if question_vector is None else question_vector
    dense = (embedder.embed(texts) if text_vectors is None else text_vectors) @ target
    words = terms(question)
    docs = [set(terms(t)) for t in texts]
    idf = _idf(docs)
    numeric = asks_quantity(question)
    return [
        float(dense[i]) + TERM_WEIGHT * _term_share(words, docs[i], idf)
        + (NUMBER_BONUS if numeric and _NUMBER.search(texts[i]) else 0.0)
        - (TABLE_PENALTY if _tabular(texts[i]) else 0.0)
        - (OTHERS_PENALTY if of_others(texts[i], own) else 0.0)
        for i in range(len(texts))
    ]  # fmt: skip


# "On-bird Sound Recordings: ... Contexts Dan Stowell, Emmanouil Benetos and Lisa F.": the front
# page's title and author line, which a paper's first chunk holds and the splitter cannot tell from
# prose. 34 of the benchmark's candidate sentences, 16 of them chosen (3 with a key fact, each
# also in another chosen sentence), and the model copied "STaR: Self-Taught Reasoner ... Eric
# Zelikman∗1, Yuhuai Wu∗12, Noah D" and another paper's author line into answers.
_NAME_LIKE = re.compile(r"^(?:[A-Z][\w.'’-]*|\S*\d\S*|[∗*†‡§]\S*|and)$")
FRONT_TITLE_AT = 40  # characters of page furniture before the title ("13–16, 2016, SALERNO, ITALY")
FRONT_TITLE_MIN = 12  # a shorter title ("Acoustic Scene Classification" is 29) opens prose too


@lru_cache(maxsize=256)
def _title_key(title: str) -> str:
    # once per paper, not once for each of the ~100 sentences a reading weighs
    return " ".join(unicodedata.normalize("NFKC", title).split()).lower()


def front_matter(sentence: str, title: str) -> bool:
    """Whether a sentence is the front page's title followed by its authors (names, initials,
    affiliation marks), not prose that names the title ("Acoustic scene classification (ASC)
    refers to ...")."""
    wanted = _title_key(title)
    text = " ".join(sentence.split())
    at = text.lower().find(wanted)
    if len(wanted) < FRONT_TITLE_MIN or at < 0 or at > FRONT_TITLE_AT:
        return False
    after = [w for w in (w.strip(",;") for w in text[at + len(wanted) :].split()[:8]) if w]
    return len(after) >= 2 and sum(bool(_NAME_LIKE.match(w)) for w in after) >= max(2, len(after) // 2)


# "who wrote it, and where do they work?": asked of the front page itself (not "who wrote the
# summaries in the dataset?", nor "what explanation do the authors give?")
_WHO = re.compile(
    r"\bwho\s+(?:wrote|writes|authored|published|made|created|developed|built|did|(?:is|are)\s+behind)\s+"
    r"(?:it|this|that|the\s+(?:[\w-]+\s+){0,4}?(?:paper|study|survey|article|work|one|review|report)\b|(?-i:[A-Z]))"
    r"|\bwho\s+(?:are|is|were|was)\s+(?:the\s+|its\s+|their\s+)?(?:authors?|writers?|researchers)\b"
    r"|\b(?:names?\s+of\s+the|list\s+(?:of\s+)?the)\s+authors\b|\bauthors?['’]?s?\s+names?\b|\bauthor\s+list\b"
    r"|\bwritten\s+by\b|\baffiliat\w*|\bwhich\s+(?:labs?|universit\w+|institutions?)\b"
    r"|\bwhere\s+(?:do|did|does)\s+(?:they|the\s+authors?)\s+work\b",
    re.I,
)


def asks_who(question: str) -> bool:
    return bool(_WHO.search(question))


def select_sentences(
    question: str,
    passages: list[ChunkHit],
    embedder: Embeds,
    n: int = SENTENCES,
    question_vector: np.ndarray | None = None,
    own: Sequence[str] = (),
    title: str = "",
) -> list[Sentence]:
    """The n sentences of the passages that best answer the question (plus the sentence before
    one that leans on it), in reading order, each with its score. `question_vector`: the
    question's vector when the caller has it already; `title`: the paper's, whose front-page
    title-and-authors line is no sentence to answer from."""
    found: list[tuple[ChunkHit, int, str]] = []
    seen: set[str] = set()
    skip_front = bool(title) and not asks_who(question)
    for chunk in passages:
        for at, text in enumerate(split_sentences(chunk.text)):
            key = same_sentence(text)
            if skip_front and front_matter(text, title):
                continue
            if key not in seen:
                seen.add(key)
                found.append((chunk, at, text))
    if not found:
        return []
    texts = [t for _, _, t in found]
    vectors = embedder.embed(texts)
    scores = sentence_scores(question, texts, embedder, question_vector, vectors, own)
    # the question's own words weigh as much as the whole question (which may say what matters in
    # its opening: "For the text-composition stage of expository writing, how ...?"); key facts
    # among the 8 sentences 228 -> 233 of 303, turns with every fact 118 -> 121 of 170, none lost
    core = without_preamble(question)
    if core != question:
        of_core = sentence_scores(core, texts, embedder, text_vectors=vectors, own=own)
        scores = [(a + b) / 2 for a, b in zip(scores, of_core, strict=True)]
    parts = sub_questions(core)
    if len(parts) == 1:
        chosen = set(sorted(range(len(found)), key=lambda i: -scores[i])[:n])
    else:
        # "Where were the recordings made, and which classes does it contain?": the sentences
        # that best answer the whole question mostly answer one part; taken in turns, each part
        # gets its own (key facts among the selected sentences, benchmark, 8 sentences: one-paper
        # questions 0.665 -> 0.683, follow-ups 0.662 -> 0.676)
        rankings = []
        for part in parts:
            of_part = sentence_scores(part, texts, embedder, text_vectors=vectors, own=own)
            blended = [(a + b) / 2 for a, b in zip(scores, of_part, strict=True)]
            rankings.append(sorted(range(len(found)), key=lambda i: -blended[i]))
        picked: list[int] = []
        while len(picked) < min(n, len(found)):
            for ranking in rankings:
                best = next((i for i in ranking if i not in picked), None)
                if best is not None and len(picked) < n:
                    picked.append(best)
        chosen = set(picked)
    for i in list(chosen):
        chunk, at, text = found[i]
        if at > 0 and _LEANS_BACK.match(text) and i - 1 >= 0 and found[i - 1][0] is chunk:
            chosen.add(i - 1)
    return [
        Sentence(
            paper_id=found[i][0].paper_id,
            chunk_id=found[i][0].chunk_id,
            seq=found[i][0].seq,
            at=found[i][1],
            text=found[i][2],
            score=scores[i],
        )
        for i in sorted(chosen, key=lambda i: (found[i][0].seq, found[i][1]))
    ]


# "In the DNA alignment work that embeds reads with a transformer, what is the encoder's
# architecture ...?": the words that describe the paper, which every sentence of it resembles. Read
# inside that paper, they outranked the sentence that answers ("... comprising 12 heads and
# 6-layers of encoder blocks", 11th of 46; a question without them put it 1st). Not "When ...,":
# that is a condition of what is asked ("When PaLM generates the training data, how much ...").
_PREAMBLE = re.compile(
    r"^(?:In|For|Within|Regarding|About)\s+(?:the|this|that|these|its|their|an?|[A-Z][\w'’-]*)\b[^?]{8,220}?,\s+"
    r"(?=(?:(?:from|in|on|to|at|by|with|for|of)\s+)?(?:what|how|why|which|where|who|whom|whose|is|are|was|were"
    r"|does|do|did|can|could|should|would)\b)",
    re.I,
)


def without_preamble(question: str) -> str:
    """The question without an opening phrase that describes the paper it is asked of ("In the
    MGP-RNN sepsis detection work, why did ...?" -> "Why did ...?"); as it is when it has none."""
    asked = question.strip()
    m = _PREAMBLE.match(asked)
    if not m:
        return question
    rest = asked[m.end() :]
    return rest[:1].upper() + rest[1:]


_PARTS = re.compile(
    r",?\s+and\s+(?=(?:what|how|why|which|when|where|whether|does|do|did|is|are|was|were|can|could|should"
    r"|would|to what|in what)\b)|\?\s+(?=[A-Z])",
    re.I,
)


def sub_questions(question: str) -> list[str]:
    """The parts a question asks ("What top-5 error ..., and how did that compare ...?"); the
    question itself when it asks one thing."""
    parts = [p.strip(" ,?") for p in _PARTS.split(question) if p and len(p.split()) >= 3]
    return parts if len(parts) > 1 else [question]


def _tabular(text: str) -> bool:
    """A table row or a formula read as a sentence: mostly numbers and symbols, which a small
    model misreads (it took a row of a hyperparameter table for the method's result)."""
    tokens = text.split()
    wordy = sum(bool(_WORDY.fullmatch(t)) for t in tokens)
    return len(tokens) >= 8 and wordy < 0.5 * len(tokens)


def abstract_sentences(
    question: str,
    paper_id: str,
    abstract: str,
    chunk_id: str,
    embedder: Embeds,
    n: int,
    chosen: list[Sentence],
    question_vector: np.ndarray | None = None,
) -> list[Sentence]:
    """The n sentences of the paper's abstract that best answer the question, in their order,
    leaving out those `chosen` already holds (the first chunk often opens with the abstract).
    `chunk_id`: the chunk that holds the abstract, where the source card points."""
    have = {same_sentence(s.text) for s in chosen}
    texts = [t for t in split_sentences(abstract) if same_sentence(t) not in have]
    if not texts or n <= 0:
        return []
    scores = sentence_scores(question, texts, embedder, question_vector)
    best = sorted(sorted(range(len(texts)), key=lambda i: -scores[i])[:n])
    return [
        Sentence(paper_id=paper_id, chunk_id=chunk_id, seq=ABSTRACT_SEQ, at=i, text=texts[i], score=scores[i])
        for i in best
    ]


AUTHORS_NAMED = 12  # of a long author list, the first; the rest as "and others"


def authors_sentence(paper_id: str, chunk_id: str, authors: Sequence[str]) -> Sentence:
    """The paper's authors as a sentence to read with its own, for "who wrote it?": a paper's
    stored text mostly lacks its author line (ingest takes the front page apart; CiteSee's first
    chunk opens with its abstract), the paper's record has it. `chunk_id`: where the source card
    points (the front page)."""
    names = list(authors[:AUTHORS_NAMED])
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    more = " and others" if len(authors) > AUTHORS_NAMED else ""
    return Sentence(
        paper_id=paper_id, chunk_id=chunk_id, seq=ABSTRACT_SEQ, at=-1,
        text=f"The paper's authors are {listed}{more}.", score=1.0,
    )  # fmt: skip


def same_sentence(text: str) -> str:
    """A sentence as two copies of it compare: its letters and digits alone, ligatures unfolded.
    The abstract, as arXiv's metadata gave it, writes "Specif- ically" and "English- to-German"
    where the paper's body has "Specifically" and "English-to-German"; read as two sentences,
    the same claim took two of a follow-up's 10 places (4 of the benchmark's 10 follow-ups
    answered wrong with the asked fact in front of the model showed such a pair)."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())


# a word broken at a line end that the abstract kept: "ef- ﬁcient", "Specif- ically"
_BROKEN = re.compile(r"\b([A-Za-z]+)- ([a-z]+(?:-[A-Za-z]+)*)\b")
_LETTERS = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


def readable_abstract(abstract: str, body: Iterable[str]) -> str:
    """The abstract as the reader shows it: ligatures unfolded ("modiﬁcations" held no word
    "modifications" for the question's words to meet) and each word broken at a line end whole
    again, whole or hyphenated as the paper's `body` writes it ("Specif- ically" is
    "Specifically", "English- to-German" is "English-to-German"; a pair the body has neither way
    stays as it is)."""
    text = unicodedata.normalize("NFKC", abstract)
    if "- " not in text:
        return text
    # the body's chunks were unfolded (NFKC) at ingest (ingest/chunking.py)
    seen = Counter(w.lower() for part in body for w in _LETTERS.findall(part))

    def join(m: re.Match) -> str:
        left, right = m.group(1), m.group(2)
        whole, hyphenated = seen[(left + right).lower()], seen[f"{left}-{right}".lower()]
        if whole == hyphenated:  # neither written: "first- and second-order" is no broken word
            return m.group(0)
        return f"{left}{right}" if whole > hyphenated else f"{left}-{right}"

    return _BROKEN.sub(join, text)


def relevance(sentences: list[Sentence]) -> float:
    """How well a paper's selected sentences answer the question: its best sentence's score. The
    abstract's sentences are left out: they resemble any question on the paper's topic, and the
    reader weighs papers against each other by what their bodies say."""
    return max((s.score for s in sentences if s.seq != ABSTRACT_SEQ), default=0.0)


# (not the start of a compound: "the paper-search agent" is what the paper built)
_POINTER = re.compile(
    r"\b(?:the|that|this)\s+(?:(?:first|second|third|fourth|fifth|last|other|former|latter)\s+)?"
    r"(?:one|paper|study|survey|work|article)\b(?!-)(?:\s+you\s+(?:mentioned|listed|cited))?"
    r"|\[\d{1,2}\]|\bpaper\s+\d{1,2}\b",
    re.I,
)


def about_this_paper(question: str) -> str:
    """A follow-up as the reader's prompt asks it: "the third one" / "[2]" / "the other paper"
    become "this paper" (the prompt names the paper; the model took "the third one" for the
    third numbered sentence)."""
    asked = _POINTER.sub("this paper", question).strip()
    return asked[:1].upper() + asked[1:]


SINGLE_SYSTEM = (
    "You answer a question about one research paper using only numbered sentences taken from it. "
    "State exactly what is asked (the numbers, names, methods or reasons) as the sentences give them."
)


def _numbered_question(question: str, title: str, sentences: list[Sentence]) -> str:
    """The opening the answer and the pick prompts share (the model's cache keeps it between)."""
    numbered = "\n".join(f"[{n}] {s.text}" for n, s in enumerate(sentences, 1))
    return f'Numbered sentences from the paper "{title}":\n{numbered}\n\nQuestion: {question.strip()}\n\n'


# No ready-made phrase for "not found": the 1.5B model copied one at the start of answers that
# then went on to answer.
_CITE_AND_DECLINE = (
    "After each of your sentences write the number of the sentence it uses, like [2]. If no "
    "numbered sentence answers the question, say that these passages do not answer it and what "
    "they describe instead."
)


def _answer_prompt(question: str, title: str, sentences: list[Sentence], level: str | None, ask: str) -> str:
    style = f"\n{LEVEL_STYLE[level]}" if level in LEVEL_STYLE else ""
    return f"{_numbered_question(question, title, sentences)}{ask} {_CITE_AND_DECLINE}{style}"


# "Is the attention in the other one an approximation?", "..., does it need perspective maps?": a
# question (or a part of one) that asks whether something is so
_YES_NO = re.compile(
    r"(?:^|[?:;,]\s+|\band\s+)(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should)"
    r"\s+(?!there\b)\w",
    re.I,
)


def asks_yes_no(question: str) -> bool:
    return bool(_YES_NO.search(question.strip()))


# Asked whether something is so, the 1.5B model agreed with the question whatever the sentences
# said: "Yes, this paper is an approximation" of FlashAttention ("exact attention"), "the hidden
# state is required to reconstruct the observation" of MuZero ("no requirement"). Made to say first
# what the sentences state, it has the paper's words in front of it when it says yes or no.
YES_NO_ASK = (
    "The question asks whether something is so: first say what the numbered sentences state about "
    "it, in their words, then whether that means yes or no."
)


# "The sentences state that training TAPAS on permuted tables ...": told to say what the numbered
# sentences state, the model names them; the person asking was shown no sentences, only the paper.
# Its decline line ("say that these passages do not answer it and what they describe") comes back
# as the opening of answers that do answer: "These passages describe how FlashAttention avoids
# storing the attention matrix" (5 of the 96 single-paper answers of the last full run), "The
# passage also mentions that ViT has fewer inductive biases". A "do not answer" line is left as
# it is: it is the answer's decline.
# Asked whether something is so, it also names the sentences by their marks: "The sentences [2],
# and [3] describe ZeRO's ...", "This is stated in sentence [1].", "..., as described in sentence
# [4]" (5 of 18 yes/no answers of 2026-12-07), which the person reads as "The
# sentences [1], and [1] describe ...".
_ONE_MARK = r"\[\d{1,2}\]"
_MARKS_NAMED = rf"{_ONE_MARK}(?:\s*,?\s*(?:and\s+)?{_ONE_MARK})*"
_SENTENCES_SAY = re.compile(
    rf"\b(?:the|these)\s+(?:numbered\s+)?(?:sentences?|passages?)\s+(?:(?P<marks>{_MARKS_NAMED})\s*,?\s+)?"
    r"(?P<also>also\s+)?"
    r"(?P<verb>state|say|show|describe|explain|mention|compare|discuss|present|give|note)(?:e?s)?\b",
    re.I,
)
_SAID_WHERE = (
    r"(?:stated|said|described|mentioned|shown|explained|given|noted)"
    r"\s+in\s+(?:the\s+)?(?:numbered\s+)?sentences?"
)
# a sentence that only says where: "This is stated in sentence [1]."
_ONLY_WHERE = re.compile(
    rf"(?:^|(?<=[.!?])\s+)(?:This|It|That)\s+is\s+(?:also\s+)?{_SAID_WHERE}\s+{_MARKS_NAMED}\s*\.(?=\s|$)",
    re.I,
)
# "..., as described in sentence [4]": the mark stays, as the citation it is
_AS_SAID_WHERE = re.compile(rf",?\s+(?:as\s+)?(?:is\s+)?{_SAID_WHERE}\s+(?P<marks>{_MARKS_NAMED})", re.I)


def as_the_papers(text: str) -> str:
    """The answer with what "the sentences state" said as what the paper states, and with no
    sentence named by its mark."""

    def said(piece: str) -> str:
        named: list[str] = []

        def paper(m: re.Match) -> str:
            named.extend(re.findall(_ONE_MARK, m.group("marks") or ""))
            said = "The paper" if m.group(0)[0].isupper() else "the paper"
            verb = m.group("verb").lower()
            return f"{said} {m.group('also') or ''}{verb}{'es' if verb.endswith('ss') else 's'}"

        piece = _SENTENCES_SAY.sub(paper, piece)
        if named and not re.search(_MARK, piece):
            # the sentences it named are its citation, at the end of what it says of them
            tail = piece[len(piece.rstrip()) :]  # with_mark ends the text at its stop
            for mark in named:
                piece = with_mark(piece, int(mark[1:-1]))
            piece += tail
        return piece

    text = _ONLY_WHERE.sub("", text)
    text = _AS_SAID_WHERE.sub(lambda m: " " + re.findall(_ONE_MARK, m.group("marks"))[0], text)
    return "".join(said(piece) for piece in _pieces(text))


# A follow-up is asked of "this paper" ("How was the paper-search agent trained?" -> "How was this
# paper trained?"), and the 1.5B model keeps it as its subject for what the system did: "This paper
# was trained solely on synthetic data", "This paper splits up across the data-parallel workers".
# Where the title opens with the system's name ("PaSa: An LLM Agent ..."), the answer says that
# name; "The paper shows / describes / proposes ..." is said of a paper and stays.
# (the model also writes the title after it: 'This paper "DocLayNet: A Large ..." contains 80863
# pages' had become 'DocLayNet "DocLayNet: A Large ..." contains', so a quoted title goes with it;
# atomic, so that a reporting verb after the title still keeps "This paper")
_PAPER_SUBJECT = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:This|The)\s+paper\s+(?>(?:[\"“][^\"“”\n]{3,300}[\"”],?\s+)?)"
    r"(?!(?:also|in|itself)\b|(?:"
    r"state|show|describe|discuss|mention|propose|present|introduce|argue|explain|find|found|"
    r"demonstrate|report|illustrate|address|suggest|note|claim|conclude|provide|give|study|studie|"
    r"focus|examine|investigate|evaluate|review|survey|compare|analy[sz]e|highlight|outline|cover|"
    r"acknowledge|say|write|wrote|give|gave|define|conduct|offer|contribute|summari[sz]e)(?:s|d|ed|es)?\b)",
)


def by_name(text: str, title: str) -> str:
    """The answer with "This paper" as the doer of what its system did said as the system's name,
    when the title opens with one ("PaSa: ...", "ZeRO: ...", "Multi-LexSum: ..."); otherwise as it
    is. Words before a colon that only name a field ("Deep Learning: A Survey", "Large Language
    Models: ...") are no system: a name is one word or has one written as a name (capitals inside
    it or a digit, as "Multi-LexSum", "GPT-3 Agents")."""
    name = title_head(title.strip())
    words = name.split()
    if not words or not all(re.fullmatch(r"[A-Z][\w-]*", w) for w in words):
        return text
    if len(words) > 1 and not any(
        sum(c.isupper() for c in w) >= 2 or any(c.isdigit() for c in w) for w in words
    ):
        return text
    return _PAPER_SUBJECT.sub(f"{name} ", text)


# "Why did the authors avoid majority voting?", "what explanation do the authors give?"
_WHY = re.compile(
    r"(?:^|[,;:?]\s+|\band\s+)why\b"
    r"|\bwhat\s+(?:(?:is|was|are|were)\s+the\s+)?(?:explanation|reasons?|motivation)\b",
    re.I,
)


def asks_why(question: str) -> bool:
    return bool(_WHY.search(question.strip()))


# Asked why, the 1.5B model said again what was done ("they considered them unusable because they
# were too far from usable") or took a reason from another sentence, with the paper's own reason
# among the numbered sentences in 7 of the 10 one-paper "why" questions it got wrong.
WHY_ASK = (
    "The question asks why: give the reason the numbered sentences state for it (often after words "
    "such as because, since, due to, so that, to avoid), not only what was done."
)


def single_paper_prompt(question: str, title: str, sentences: list[Sentence], level: str | None) -> str:
    ask = (
        "Answer the question in 1 to 3 short sentences, with the specific facts the numbered "
        "sentences give (numbers, names, reasons)."
    )
    extra = [line for asks, line in ((asks_yes_no, YES_NO_ASK), (asks_why, WHY_ASK)) if asks(question)]
    return _answer_prompt(question, title, sentences, level, " ".join([ask, *extra]))


PICKED = 3  # sentences the model points at before it answers
# "hint": the answer is written from all the sentences, told which ones the pick call found
# answering; "only": from the sentences picked alone; "off": no pick call. On 34 single-paper
# benchmark questions (24 answered wrong with every key fact in front of the model, 10 right),
# local model: shipped 10 right, "only" 12 of 31 (slower), "hint" 21 (13 fixed, 2 broken) at
# the same p50. The small model points at the right sentence more often than it copies the
# right one of several numbers unaided, and seeing all of them keeps it from losing the context
# that "only" cut away.
PICK_MODE = "hint"


def pick_schema(n: int) -> dict:
    """The pick call's reply: up to PICKED sentence numbers, in a grammar the model must follow."""
    return {
        "title": "sentence pick",
        "type": "object",
        "properties": {
            "sentences": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": n},
                "minItems": 0,
                "maxItems": PICKED,
            }
        },
        "required": ["sentences"],
    }


def pick_prompt(question: str, title: str, sentences: list[Sentence]) -> str:
    return (
        _numbered_question(question, title, sentences)
        + f"Which numbered sentences state the answer to the question? Give at most {PICKED} numbers, "
        "the one that answers it most directly first; none if no sentence answers it."
    )


def picked_sentences(reply: str, n: int) -> list[int]:
    """The 1-based sentence numbers of a pick reply, in its order; [] when it is not one."""
    try:
        raw = json.loads(reply)
    except ValueError:
        return []
    numbers = raw.get("sentences") if isinstance(raw, dict) else None
    if not isinstance(numbers, list):
        return []
    found: list[int] = []
    for k in numbers:
        if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n and k not in found:
            found.append(k)
    return found[:PICKED]


def hinted_prompt(prompt: str, picked: list[int]) -> str:
    """A single-paper prompt told which of its sentences the pick call found answering."""
    marks = ", ".join(f"[{k}]" for k in picked)
    return f"{prompt}\nThe sentences that answer it: {marks}."


# A measured figure as a sentence or an answer states it: a decimal or a percentage ("3.57%",
# "28.4", "0.602", "72%"). A sentence mark "[7]" is taken out first; "GPT-2" or "5-way" is none. A
# plain integer is left alone: counts and years ("13 instances", "2021") are as often found in a
# sentence the pick missed as in one it did not point at for good reason.
_FIGURE = re.compile(r"(?<![\w.,-])(\d+(?:,\d{3})*(?:\.\d+)?)(\s?%|×|[xX](?![a-zA-Z]))?(?![\w-]|[.,]\d)")


def _measures(text: str) -> set[str]:
    found = _FIGURE.findall(re.sub(_MARK, " ", text))
    return {n.replace(",", "") for n, unit in found if "." in n or unit.strip() == "%"}


def figures_not_pointed_at(
    answer: str, question: str, sentences: list[Sentence], picked: list[int]
) -> list[str]:
    """The measured figures the answer states that only sentences the model did not point at
    hold, when those it pointed at give one of their own: it pointed at "Our ensemble has 3.57%
    top-5 error on the ImageNet test set" and then wrote 9.0% from the localization sentence
    beside it. Figures of the question are its own. When the sentences pointed at give no such
    figure, the pick missed the one that does and the answer is right to take it."""
    pointed = set().union(*(_measures(sentences[k - 1].text) for k in picked))
    if not pointed:
        return []
    others = set().union(*(_measures(s.text) for n, s in enumerate(sentences, 1) if n not in picked))
    asked = _measures(question)
    return sorted(f for f in _measures(answer) if f in others and f not in pointed and f not in asked)


# that line written back as the answer's opening ("The sentences that answer the question are [1]
# and [3].", 2 of 96 benchmark answers): kept in step with the line above, left out like an echo
_HINT_ECHO = re.compile(r"^\s*the\s+sentences?\s+that\s+answers?\b", re.I)


MANY_SYSTEM = (
    "You answer a question about several research papers using only what is written of each "
    "paper. Say of each paper only what is written of it."
)


# A question over several papers is read paper by paper (map): each paper's own sentences go to
# a call of their own, which writes that paper's bullet, and a last short call says how they differ
# (reduce). Shown every paper's sentences in one prompt, the 1.5B model stated each paper's key fact
# in 1 of the benchmark's 12 cross-paper questions and wrote one paper's findings under another's
# mark ("CiteSee [1]: Paper Plain is designed for healthcare consumers [2] ...").
EACH_SENTENCES = 2  # a paper's bullet, in sentences


# What the call is for is said in its system message: a line of the prompt saying "the question is
# asked of several papers" came back as a paper's whole bullet (3 of the 12 cross-paper questions).
EACH_SYSTEM = (
    "You answer a question asked of several research papers, for one of them, using only numbered "
    "sentences taken from that paper. State exactly what is asked (the numbers, names, methods or "
    "reasons) as the sentences give them."
)


def one_of_several_prompt(question: str, title: str, sentences: list[Sentence], level: str | None) -> str:
    ask = (
        "Answer the question for this paper only, in 1 or 2 short sentences with the specific facts "
        "the numbered sentences give (what it does, how, with what result)."
    )
    return _answer_prompt(question, title, sentences, level, ask)


def without_sentences(text: str, drop: Callable[[str], bool]) -> str:
    """The text without the sentences `drop` picks."""
    return "".join(p for p in _pieces(text) if not drop(p)).strip()


def without_the_question(text: str, question: str, title: str = "") -> str:
    """A paper's bullet without the sentences that only say the question back ("The acoustic scene
    classification evaluation and the bird audio detection challenge both report an MFCC+GMM
    baseline.", or a short "This paper records birds." under "Which papers here record birds ...?"):
    under each of several papers they fill the answer and state nothing. `title`: the paper's own,
    which such a sentence names too ("The paper "On First-Order Meta-Learning Algorithms" addresses
    meta-learning for few-shot classification.", 2 of the 12 cross-paper answers)."""
    restated = without_sentences(text, lambda said: repeats(said, [question]))
    if _ALTERNATIVES.search(question):
        return restated  # "English or Chinese?": a short "It trains on Chinese text." is the answer
    asked = _asked_words(question, title)
    # a bullet that is nothing but such a sentence says the paper fits: that, not "does not answer"
    return without_sentences(restated, lambda said: _only_asked(said, asked)) or restated


def _asked_words(question: str, *titles: str) -> set[str]:
    """The words a sentence may use and still say only the question back: the question's, the
    papers' titles' and the names for a paper."""
    return {_singular(w) for w in terms(" ".join([question, *titles]))} | _ABOUT_A_PAPER


def speaks_to(text: str, question: str, title: str = "") -> bool:
    """Whether an answer uses a word of the question other than the paper's title and the names
    for a paper: written again from the sentences the model pointed at, the 1.5B model copied
    them whether or not they answer ("You are provided a 'Related Work' section" for "what does it
    use as identifiers for documents?")."""
    own = {_singular(w) for w in terms(title)} | _ABOUT_A_PAPER
    asked = {_singular(w) for w in terms(question)} - own
    return bool(asked & {_singular(w) for w in terms(re.sub(_MARK, " ", text))})


# what a bullet's sentence calls the paper it is under: no word of its own
_ABOUT_A_PAPER = frozenset({"paper", "study", "work", "author", "article", "approach", "method"})
_NEGATION = re.compile(r"\b(?:not|no|none|neither|nor|without|never|cannot)\b|n['’]t\b", re.I)
_ALTERNATIVES = re.compile(r"\bor\b|\bwhich is\b|\bwhether\b", re.I)


def _singular(word: str) -> str:
    """A plural or third-person -s taken off: "records" is "record", "papers" is "paper",
    "addresses" is "address"."""
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _only_asked(sentence: str, asked: set[str]) -> bool:
    """A sentence whose every word the question (or a name for the paper) already has, and which
    does not deny it: too short for the restatement test, and says nothing the asker did not."""
    plain = re.sub(_MARK, " ", sentence)
    words = {_singular(w) for w in terms(plain)}
    return bool(words) and words <= asked and not _NEGATION.search(plain) and not _NUMBER.search(plain)


def with_mark(text: str, n: int) -> str:
    """The text with the mark [n] at its end, moved before its last full stop like the model's own
    marks: left after the stop, the grounding check found the last sentence uncited and cited it
    again ("... automatic acoustic recognition [1]. [1]", 6 of the 12 cross-paper answers). A
    closing REST_NOT_ANSWERED stays last: the mark goes on the statement before it, the one the
    paper's sentences support."""
    body = text.rstrip()
    rest = ""
    if body.endswith(REST_NOT_ANSWERED) and body[: -len(REST_NOT_ANSWERED)].strip():
        body, rest = body[: -len(REST_NOT_ANSWERED)].rstrip(), " " + REST_NOT_ANSWERED
    return _MARK_AFTER_STOP.sub(_mark_before_stop, f"{body} [{n}]") + rest


# "In [2], the authors use ...": a mark the sentence reads as a noun; taken out with the rest, it
# left "In, the authors use ..." in the bullets the synthesis is written from
_MARK_AS_NOUN = re.compile(
    rf"\b(in|from|by|of)\s+(?:paper\s+)?{_MARK}(?=\s*[,;:]|\s+(?!and\b|or\b)[a-z])", re.I
)


def without_marks(text: str) -> str:
    """The text without its marks, one read as a noun ("In [2], ...") said as "the paper"."""
    text = _MARK_AS_NOUN.sub(r"\1 the paper", _MARK_AS_SUBJECT.sub(_paper_as_subject, text))
    return re.sub(r"\s+(?=[.,;:!?])", "", _SENTENCE_MARK.sub("", text)).strip()


def only_the_question(text: str, question: str, titles: Sequence[str] = ()) -> bool:
    """Whether every sentence of the text says the question back, naming at most the papers'
    `titles` ("The papers about distilling a large model into a smaller one are [1] and [2].",
    "The papers "Distilling ..." and "Teaching ..." are both about distilling a large model into a
    smaller one.": written as how two papers differ, they say neither)."""
    asked = _asked_words(question, *titles)
    left = without_sentences(text, lambda said: repeats(said, [question]) or _only_asked(said, asked))
    return bool(text.strip()) and not left


def differ_prompt(question: str, bullets: list[tuple[str, str]], level: str | None) -> str:
    """The reduce step: what the papers' bullets say, and the question; one sentence back."""
    style = f"\n{LEVEL_STYLE[level]}" if level in LEVEL_STYLE else ""
    said = "\n".join(f'- "{title}": {without_marks(text)}' for title, text in bullets)
    return (
        f"What each paper says:\n{said}\n\nQuestion: {question.strip()}\n\n"
        "In one sentence, say how the papers differ on what the question asks, naming each paper. "
        f"Use only what is written above.{style}"
    )


_SENTENCE_MARK = re.compile(r"\[(\d{1,2})(?:\s*[,-]\s*\d{1,2})*\]")
# the same with the spaces before it: a mark of no sentence shown is the paper's own citation the
# model copied from a sentence ("HuggingFace [87]"), and goes with them
_SPACED_SENTENCE_MARK = re.compile(r"([ \t]*)" + _SENTENCE_MARK.pattern)


# A line that opens with a mark: the 1.5B model sometimes copies the numbered list it was given
# ("[1] 2 Data Collection ...", 13 of the 190 answers of the benchmark's full run); the mark goes
# to the line's end, where a reader (and the grounding check) takes it for that line's source.
_LEADING_MARK = re.compile(rf"^[ \t]*({_MARK})[ \t]*(\S.*?)[ \t]*$", re.M)


# "... 11 class labels [1]. [1]", "... [1], [1]": once sentence marks become paper marks, a paper
# is often cited twice in a row (every mark of a one-paper answer becomes [1]); 50 of the 190
# answers of the benchmark's full run showed such a pair, most of them mid-answer
# "... outputs [1]., [1].", "... [1]. [1].." (14 of the 96 single-paper answers with the pick hint):
# the model wrote "[3]., [5]." and both are the paper's, so the run, stops and all, is one mark
_REPEATED_MARK = re.compile(r"\[(\d{1,2})\]((?:[ \t]*[.,;]{0,2}[ \t]*\[\1\])+[.]*)")


# "... by 2.1%. [3]": the model often puts its mark after the full stop, where the grounding check
# reads it as a sentence of its own and the sentence before as uncited (it then got a second mark);
# a run of them ("... faster. [5], [2].", 2 of 96 answers with the pick hint) moves as one, so the
# pair, once both are the same paper's, is cited once; so is one joined by "and" ("... 1.75T tokens
# [1]. [5] and [6].", a chat: it was shown as "The paper and [1].")
_MARK_RUN = rf"{_MARK}(?:(?:[ \t]*,?[ \t]*|[ \t]+and[ \t]+){_MARK})*"
# (not after an abbreviation's stop: "(65.2% vs. [3] 42.9% ...)" came out "(65.2% vs [1]. 42.9% ...)")
_MARK_AFTER_STOP = re.compile(rf"([.!?]){NOT_AFTER_ABBREVIATION}[ \t]*({_MARK_RUN})[.!?]?")


def _listed(marks: str) -> str:
    """A run of marks as a list ("[5] and [6]" -> "[5], [6]"), which _REPEATED_MARK makes one."""
    return re.sub(r"[ \t]+and[ \t]+", ", ", marks)


def _mark_before_stop(m: re.Match) -> str:
    return f" {_listed(m.group(2))}{m.group(1)}"


# "... memory accesses [2]. [6] compares FlashAttention and Apex FMHA ...", "Specifically, [1]
# describes ...": shown the numbered sentences (and the hint naming them), the model now and then
# makes a mark the subject of its sentence; moved to the end like any other mark, it left "...
# accesses [1] [1]. compares FlashAttention ..." (2 of the 96 single-paper answers with the hint,
# and a chat in the browser)
# The paper becomes the subject, and the mark goes to the sentence's end.
_MARK_AS_SUBJECT = re.compile(
    # the run is taken whole (possessive): backed off to "[5]", "[5] and [6]." read as "[5]" the
    # subject of "and [6]"
    rf"(^[ \t]*|[.!?][ \t]+|,[ \t]+)({_MARK}(?:(?:[ \t]*,[ \t]*|[ \t]+and[ \t]+){_MARK})*+)[ \t]+"
    r"([a-z].*?)[ \t]*(?=[.!?](?:\s|$)|$)",  # the rest of its sentence
    re.M,
)


def _paper_as_subject(m: re.Match) -> str:
    opener, marks, said = m.group(1), m.group(2), m.group(3)
    subject = "its findings" if len(re.findall(r"\d+", marks)) > 1 else "the paper"
    if not opener.startswith(","):
        subject = subject[0].upper() + subject[1:]
    return f"{opener}{subject} {said} {_listed(marks)}"


def past_answer_length(
    text: str, n: int = ANSWER_SENTENCES, level: str | None = None, question: str = ""
) -> int | None:
    """Where to cut an answer being written: once it holds n sentences and the next has begun, or
    before a sentence that repeats one it holds. The 1.5B model was asked for 1 to 3 sentences
    and wrote 4 to 7 in 49 of 140 one-paper answers of the benchmark's full run, and their
    sentences after the third held no key fact that the first three lacked. Cut (all 96
    single-paper questions again): the same answers right where the first sentence is the same,
    the model's own text as often supported (0.82), p95 38 -> 31 s. A sentence that says the
    `question` back ("These passages describe how the retrieval method ... keeps decoding from
    producing n-grams that appear nowhere in the corpus.") is not counted: it took the place of the
    fourth, which held the asked "constrained decoding" (once marks that begin a sentence were
    counted as its start, 2204.10628-a)."""
    ends = [m.end() for m in _ANSWER_SENTENCE_END.finditer(text)]
    # before a sentence the answer already holds: the model, once it repeats itself, goes on
    # repeating ("How does the OpenAI one update its initialization?" got one sentence three times)
    seen: set[str] = set()
    counted = []  # a copy of the level line is no sentence of the answer: it will be left out
    for start, end in zip([0, *ends], ends, strict=False):
        said = _said(text[start:end])
        if said and said in seen:
            return start
        seen.add(said)
        if not _echoes(text[start:end], level) and not (question and repeats(text[start:end], [question])):
            counted.append(end)
    return counted[n - 1] if len(counted) >= n else None


# The level line ends the prompt, and the 1.5B model sometimes copies it into its answer as a
# sentence ("The user is a graduate student (MSc)."): 9 of the 71 sentences the benchmark's run
# left out as unsupported were such copies. A sentence this much made of the line's words is one.
ECHO_SHARE = 0.8


def _pieces(text: str) -> list[str]:
    ends = [m.end() for m in _ANSWER_SENTENCE_END.finditer(text)]
    return [text[start:end] for start, end in zip([0, *ends], [*ends, len(text)], strict=True)]


def without_echo(text: str, level: str | None) -> str:
    """The answer without the sentences that copy the level instruction of its prompt."""
    if level not in LEVEL_STYLE:
        return text
    return "".join(p for p in _pieces(text) if not _echoes(p, level)).strip() or text


# A figure's axis ticks or a table's cells that the PDF's text ran into a sentence, and the model
# copied into its answer: "... generalising to new birds and 01020304050607080 On-duration
# (minutes) 0 20 40 60 80 100 ...", "GSM8K 8.11 21.99 38.21 56.90 58.60 Dataset Size 6725 ...".
# The sentences shown keep them (a table row may hold the figure asked for); the answer does not.
_FIGURE_RUN = 8  # tokens looked at together
_FIGURE_RUN_NUMBERS = 6  # of which numbers
# a cell or a tick: "2.59%", "-20", "–"; not "1," of a list in prose ("ranks 1, 2, 4, 8, 16 and 64")
_NUMBER_TOKEN = re.compile(r"[-–−+±(]?\d(?:[\d.,]*\d)?%?\)?|[-–]")
_GLUED_TICKS = re.compile(r"\d{6,}")  # "01020304050607080": an axis's labels without spaces
_WORDS_BEFORE_FIGURE = 8  # words an answer sentence keeps before such a run, else it goes
_A_WORD = re.compile(r"[A-Za-z]{2}")


# a footnote's number the model copied on a line of its own: "... for the meta-learning updates.\n1 [1]."
_NUMBER_LINE = re.compile(rf"\n[ \t]*\d{{1,3}}[ \t]*(?:{_MARK}[ \t]*)*[.,]?[ \t]*(?=\n|$)")
# An algorithm box or a formula read into a sentence: "The Reptile algorithm is as follows:
# Algorithm 1 Reptile (serial version) Initialize φ, ... for iteration = 1, 2,." and "updates the
# initialization to φ←φ + ε 1 n n∑ i=1 (~φi −φ) (5)" were answered so (conv-13). Signs that prose
# does not use; a box's "Algorithm 2" heading.
_FORMULA_SIGN = re.compile(r"[←→⇐⇒∑∏∫∂∇∀∃∈≜]")
_ALGORITHM_BOX = re.compile(r"Algorithm|ALGORITHM")


def _figure_run_at(words: list[str]) -> int | None:
    numeric = [bool(_NUMBER_TOKEN.fullmatch(w)) for w in words]
    for i in range(len(words)):
        box = _ALGORITHM_BOX.fullmatch(words[i]) and i + 1 < len(words) and words[i + 1].isdigit()
        if box or _FORMULA_SIGN.search(words[i]):
            while i > 0 and not _A_WORD.search(words[i - 1]):
                i -= 1
            return i
        if _GLUED_TICKS.fullmatch(words[i]) or (
            numeric[i] and sum(numeric[i : i + _FIGURE_RUN]) >= _FIGURE_RUN_NUMBERS
        ):
            # the table's own symbols before its first number ("⇢ =0.9 ✏ =1e−2 2.59% ...") go too
            while i > 0 and not _A_WORD.search(words[i - 1]):
                i -= 1
            return i
    return None


def without_figure_text(text: str) -> str:
    """The answer with each sentence cut where figure or table numbers, an algorithm box or a
    formula run into it ("…" and its marks kept), or left out when little of it comes before
    them."""
    kept: list[str] = []
    for piece in _pieces(_NUMBER_LINE.sub("", text)):
        words = re.sub(_MARK, " ", piece).split()
        at = _figure_run_at(words)
        if at is None:
            kept.append(piece)
        elif at >= _WORDS_BEFORE_FIGURE:
            marks = " ".join(dict.fromkeys(re.findall(_MARK, piece)))
            lead = piece[: len(piece) - len(piece.lstrip())]
            cut = " ".join(words[:at]).rstrip(" .,;:(—–-…")
            kept.append(f"{lead}{cut}…{' ' + marks if marks else ''}")
    return "".join(kept).strip() or text


def tidied(text: str, level: str | None) -> str:
    """A one-paper answer (or one paper's bullet) without the level line copied, sentences said
    twice, figure numbers run into a sentence or a caption's label, with the paper's "we" as "the
    authors", and a decline after what it stated said of the rest of the question."""
    return in_third_person(
        with_the_rest_declined(
            without_caption_labels(without_figure_text(without_restatements(without_echo(text, level))))
        )
    )


# "Table 2: GPT-2 small and medium using FlashAttention achieve up to 3× speed up ..." (a chat):
# the model copies a caption, label and all, as a sentence of its answer; the label is the PDF's
# layout, the rest is what the paper states
_CAPTION_LABEL = re.compile(rf"^(\s*){_CAPTION_NAME}[a-z]?\s*[:|]\s*(?=\S)")
CAPTION_REST_WORDS = 4  # "Table 2: Results." is a caption alone, not a statement to keep


def without_caption_labels(text: str) -> str:
    """The answer with the label taken off each sentence that opens with a caption's ("Table 2:",
    "Figure 1 |"), when a statement of a few words follows it."""

    def bare(piece: str) -> str:
        m = _CAPTION_LABEL.match(piece)
        if not m or len(re.sub(_MARK, " ", piece[m.end() :]).split()) < CAPTION_REST_WORDS:
            return piece
        return m.group(1) + piece[m.end() :]

    return "".join(bare(p) for p in _pieces(text))


# "We recorded 45 team registrations and received official submissions from 21 teams [1]. These
# passages do not answer the question about the number of teams that signed up ...": a decline
# written after a stated answer takes back what the answer said (17 of the answers kept in
# bench/answers, and DNA-ESA's heads and layers on a paper never tuned on). What the sentences
# leave out is the rest of the question. Tried: keeping a decline that names a part in words the
# answer did not use; the declines restate the question's description, so it kept the
# contradictions and replaced the apt ones.
REST_NOT_ANSWERED = "The sentences I read do not answer the rest of the question."


def with_the_rest_declined(text: str) -> str:
    """The answer with an unmarked decline after a statement said as REST_NOT_ANSWERED, once. The
    statement need not cite: the model leaves marks out now and then, and the check adds them."""
    if declines(text):
        return text  # an answer that opens by declining goes on to say what the paper covers
    out: list[str] = []
    stated = said = False
    for piece in _pieces(text):
        bare = re.sub(_MARK, " ", piece)
        if stated and bare == piece and declines(bare):  # one citing a sentence says what it lacks
            if not said:
                out.append(("\n" if piece.startswith("\n") else " ") + REST_NOT_ANSWERED)
                said = True
            continue
        stated = stated or (len(bare.split()) >= 4 and not declines(bare))
        out.append(piece)
    return "".join(out) if out else text


# The model copies the paper's own voice: "whereas our methods (Transformer+PonderNet) took 1658
# steps", "we scale up to the full T5 compute regime" (17 of the 190 answers of the benchmark's
# last run), which reads as the assistant claiming the work. Said of the authors instead.
_FIRST_PERSON = re.compile(r"\b(?:[Ww]e|[Oo]ur|[Oo]urs|[Oo]urselves)\b")
_THIRD_PERSON = {"we": "the authors", "our": "their", "ours": "theirs", "ourselves": "themselves"}


def in_third_person(text: str) -> str:
    """The text with the paper's first person ("we", "our") as the authors'."""

    def said(m: re.Match) -> str:
        word = m.group(0)
        third = _THIRD_PERSON[word.lower()]
        return third[:1].upper() + third[1:] if word[0].isupper() else third

    return _FIRST_PERSON.sub(said, text)


def without_restatements(text: str) -> str:
    """A one-paper answer without the sentences that say again what an earlier one said (not for
    an answer over several papers, whose bullets may rightly say the same of two papers)."""
    kept: list[str] = []
    said: list[set[str]] = []
    for piece in _pieces(text):
        words = set(terms(re.sub(_MARK, " ", piece)))
        if not _restates(words, said):
            kept.append(piece)
            said.append(words)
    return "".join(kept).strip() or text


# "Residual learning solves the degradation problem by introducing a deep residual learning
# framework [1]. This paper addresses the degradation problem by introducing a deep residual
# learning framework [1]." (the web page's answer with the local model): the second sentence says
# nothing the first did not. A sentence whose words are this much those of one before it, and
# whose numbers all are, is left out; a short one is kept (too few words to tell).
RESTATE_SHARE = 0.8
RESTATE_MIN_WORDS = 5


def _restates(words: Set[str], earlier: Sequence[Set[str]]) -> bool:
    """Whether a sentence of these words says again what one of the `earlier` sentences said."""
    if len(words) < RESTATE_MIN_WORDS:
        return False
    numbers = {w for w in words if _NUMBER.search(w)}
    return any(numbers <= before and len(words & before) >= RESTATE_SHARE * len(words) for before in earlier)


def repeats(sentence: str, texts: list[str]) -> bool:
    """Whether a sentence says again what one of `texts` says (words and numbers, as above)."""
    return _restates(_unmarked_terms(sentence), [_unmarked_terms(t) for t in texts])


@lru_cache(maxsize=256)
def _unmarked_terms(text: str) -> frozenset[str]:
    """A text's words without its marks; cached: past_answer_length asks it of the question and of
    each sentence written so far every time a token streams in."""
    return frozenset(terms(re.sub(_MARK, " ", text)))


def only_echo(text: str, level: str | None) -> bool:
    """Whether the answer is nothing but copies of the level instruction ("The user is a graduate
    student (MSc) ... They are explaining methods precisely, ...")."""
    pieces = [p for p in _pieces(text) if p.strip()]
    return level in LEVEL_STYLE and bool(pieces) and all(_echoes(p, level) for p in pieces)


# "The user is asking about ...", "The user is a researcher": the person asking, not the paper (but
# "The user can click on these questions" tells what a paper's tool does); "They are asked to
# explain the methods used in the research paper "<title>" in detail" says it with the title's
# words, too few of the level line's for the share below
_ABOUT_THE_USER = re.compile(
    r"^\s*(?:the\s+user\s+(?:is\s+(?:asking|interested|an?\s)|wants\b|has\s+an?\s)"
    r"|they\s+are\s+(?:asked\s+to\s+explain|explaining\s+the\s+methods|familiar\s+with\s+core))",
    re.I,
)


# each level line's words by their first five letters: "They are explaining methods precisely,
# naming the key ideas" copies "explain methods precisely, name the key ideas"
_TOLD = {level: {w[:5] for w in _WORD.findall(line.lower())} for level, line in LEVEL_STYLE.items()}


# the level line's own marks, which no paper writes: "Paper Plain is designed for graduate students
# (MSc) who are familiar with core CS and ML background" (a chat of 2026-12-05: the line's words
# made up a paper's reader, and the sentence on how two papers differ was built on it)
_LEVEL_MARK = re.compile(r"\((?:BSc|MSc|PhD)\)|\bcore\s+CS\s+and\s+ML\b", re.I)


def _echoes(sentence: str, level: str | None) -> bool:
    # called for every sentence each time a token streams in (past_answer_length)
    told = _TOLD.get(level or "")
    if told is None:
        return False
    if _ABOUT_THE_USER.match(sentence) or _HINT_ECHO.match(sentence) or _LEVEL_MARK.search(sentence):
        return True
    words = [w[:5] for w in _WORD.findall(re.sub(_MARK, " ", sentence).lower()) if w not in _STOP]
    return len(words) >= 2 and sum(w in told for w in words) >= ECHO_SHARE * len(words)


def _said(sentence: str) -> str:
    """A sentence's words without its marks, to tell a repeated sentence."""
    return " ".join(_WORD.findall(re.sub(_MARK, " ", sentence).lower()))


def _one_mark(m: re.Match) -> str:
    return f"[{m.group(1)}]" + ("." if "." in m.group(2) else "")


_STOPS_AFTER_MARK = re.compile(r"(\[\d{1,2}\])\.{2,}")


def sentence_marks_to_paper(answer: str, sentences: list[Sentence], paper_number: dict[str, int]) -> str:
    """The model cites sentences ([2], [1, 3]); the answer cites papers: each mark becomes the
    number of the paper its first sentence comes from, at the end of the line it opened."""
    answer = _MARK_AS_SUBJECT.sub(_paper_as_subject, answer)
    answer = _LEADING_MARK.sub(
        lambda m: m.group(2) if m.group(2).endswith("]") else f"{m.group(2)} {m.group(1)}", answer
    )

    def swap(m: re.Match) -> str:
        k = int(m.group(2))
        if 1 <= k <= len(sentences):
            return f"{m.group(1)}[{paper_number[sentences[k - 1].paper_id]}]"
        return ""  # with the space before it: "GPT-2 [67] on" is "GPT-2 on", not "GPT-2  on"

    answer = _MARK_AFTER_STOP.sub(_mark_before_stop, answer)
    answer = _REPEATED_MARK.sub(_one_mark, _SPACED_SENTENCE_MARK.sub(swap, answer))
    return _STOPS_AFTER_MARK.sub(r"\1.", answer)


def cited_sentences(answer: str, sentences: list[Sentence]) -> list[Sentence]:
    """The sentences an answer's marks point at, in the order cited."""
    found = []
    for m in _SENTENCE_MARK.finditer(answer):
        for k in re.findall(r"\d+", m.group(0)):
            i = int(k) - 1
            if 0 <= i < len(sentences) and sentences[i] not in found:
                found.append(sentences[i])
    return found
