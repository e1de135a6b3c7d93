"""Which earlier paper a follow-up means: "the second one", "[2]", "that paper", "its results",
"the other one", "the one from DeepMind".

A small model reading a long chat often picks the wrong paper (it summarised Batch Normalization
when asked how "the second one" trains its retriever), so the reference is resolved in code, from
the numbered sources of the previous answer, before the model sees the question."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

import numpy as np
from pydantic import BaseModel

from agent.level import Embeds
from agent.named import is_called, names_in
from agent.prompts import asks_for_papers

_ORDINALS = {
    "first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3,
    "fifth": 4, "5th": 4, "former": 0, "last": -1, "latter": -1,
}  # fmt: skip
_NOUN = r"(?:one|paper|papers|study|work|article|model|approach|method|system|survey|review|source)"
_TELLING_NOUNS = frozenset({"survey", "review"})  # kinds of paper a description may name alone
_ORDINAL = re.compile(
    rf"\b(?:the\s+)?(?P<ord>{'|'.join(_ORDINALS)})\b(?:\s+(?:{_NOUN})|\s*(?:one\s+)?you\s+(?:mentioned|listed|cited|named))",
    re.IGNORECASE,
)
_ORDINAL_ALONE = re.compile(r"\b(?:the\s+)(?P<ord>former|latter)\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"\[(?P<n>\d{1,2})\]|\b(?:paper|source|reference|ref\.?|no\.?)\s*#?(?P<m>\d{1,2})\b", re.I
)
# "the other one", "the other paper", "the other" alone; not "the other kind of network"
_OTHER = re.compile(
    rf"\b(?:the\s+)?other\s+(?:{_NOUN})\b|\bthe\s+other\b(?=\s*(?:[?!.,;:]|$))", re.IGNORECASE
)
_THAT_PAPER = re.compile(rf"\b(?:that|this|the\s+same)\s+(?:{_NOUN})\b", re.IGNORECASE)
_THIS = re.compile(
    rf"{_THAT_PAPER.pattern}|\b(?:it|its|their|they|them)\b(?!\s+(?:is|was)\s+(?:possible|true))",
    re.IGNORECASE,
)
# what a paper's system is called in a description ("the paper-search agent", "the citation
# tool"); not in _NOUN, where "the other agent" of a multi-agent paper is not "the other paper"
_SYSTEM_NOUN = r"(?:agent|tool|framework)"
# kinds of paper only a description names: "the opinion piece" (not "the last piece of the network")
_KIND_NOUN = r"(?:(?<=opinion\s)|(?<=position\s))piece|preprint"
# (the description is the words before its noun: not "retrieval database of the DeepMind" in "how
# big was the retrieval database of the DeepMind one?", asked as "how big was this paper?")
_DESCRIBED = re.compile(
    rf"\b(?:the|that|this)\s+(?P<desc>(?:(?!(?:the|that|this|of)\s)[\w-]+\s+){{0,5}}?)(?P<noun>{_NOUN}|{_SYSTEM_NOUN}|{_KIND_NOUN})\b(?!-)(?P<rest>\s+(?:from|by|about|on|with|that|which|where|in\s+which|whose|who|using|used|evaluated|benchmarked|trained|tested)\s+(?:[\w']|(?<=\w)-(?=\w)|\s){{2,80}}(?!\w))?",
    re.IGNORECASE,
)
# A description set apart before the question by what the paper did: "the one trying to bring
# recurrent nets back into fashion, how big ...?", "the paper reporting VTAB results - how ...?",
# "the one built around a data challenge - did ...?". Only at the start, set apart (a comma, dash
# or colon after it) and after a noun that means a paper: inside a sentence the verb is mostly the
# question's own ("what was the first one trying to fix?", "the third paper borrowed an experiment
# from child psychology", "how many chips was the Pathways model trained on, and ...?"), and after
# "model" or "method" an -ing word is mostly a noun ("the model training, how long did it take?").
_DOING = (
    r"(?!(?:string|spring|nothing|anything|something|everything|needed|during|speed|seed|feed)\b)"
    r"[a-z]{3,}(?:ing|ed)\b|built|made|written|meant|done|run|shown|known|given|taken|held|led|set"
)
_FRONTED = re.compile(
    r"^\W*(?:(?:ok|okay|so|and|but|now|then|in|for|about|regarding|on|what|how)[\s,]+){0,3}"
    r"(?:the|that|this)\s+(?P<desc>(?:[\w-]+\s+){0,5}?)(?P<noun>one|paper|study|work|article)\s+"
    # the verb ("trying") stays out of `rest`: what the paper did says which, not the verb
    rf"(?:{_DOING})(?P<rest>(?:\s+[\w'’]+(?:-[\w'’]+)*){{1,16}}?)(?=\s*(?:,|:|;|\s[-–—]+\s))",
    re.IGNORECASE,
)
# "the Vaswani et al. paper", "Andrew White's paper": a paper named by its authors
# (each name starts where no word or hyphen is before it: a long hyphenated run "A-A-A-..." would
# otherwise be scanned again from every hyphen)
_BY_AUTHOR = re.compile(
    r"(?<![\w-])(?P<name>[A-Z][\w-]+)\s+et\s+al\b"
    # "Dao's paper", "zeiler's method", "Ceder's group's paper"; not "he's one of the authors"
    r"|(?<![\w-])(?!(?i:he|she|it|that|this|there|here|what|who|let|where|how|one|someone)'s)"
    r"(?P<owner>[A-Za-z][\w-]+)'s\s+(?:(?:group|lab|team)'s\s+)?"
    r"(?:paper|work|study|survey|review|one|method|approach|model|algorithm)\b"
    # "the one Marti Hearst is on", "the paper Hinton wrote"
    r"|\bthe\s+(?:one|paper|study|work)\s+(?:[A-Z][\w.'-]*\s+){0,2}(?P<on>[A-Z][\w'-]+)\s+"
    r"(?:is\s+on|was\s+on|wrote|co-?wrote|worked\s+on)\b"
)
# "which of these was trained with Adam?", "do any of them use dropout?", "which paper you listed is
# about segmentation?": the papers just listed, each a candidate; not the paper just discussed (the
# question was answered from it alone, repeating the previous answer). Not "which of the papers on
# GANs ..." (a new question) nor "which of the two datasets / these methods ..." (things inside the
# paper discussed); the part after "these" is atomic, so "you listed" is not backtracked out of it.
_INNER = (
    r"(?:methods|models|datasets|baselines|losses|layers|metrics|results|tasks|variants|approaches|"
    r"techniques|components|benchmarks|experiments|settings|architectures|authors|features|steps)\b"
)
_HOW_MANY = r"(?:two|three|four|five|\d)"
_PAPERS = r"(?:papers|ones|works|studies)"
_LISTED = r"(?>(?:\s+(?:above|you\s+(?:listed|mentioned|cited|found)))?)"
_ENDS = r"(?=\s|[?!.,;:]|$)"
_AMONG = re.compile(
    r"\b(?P<lead>which|whichever|any|one)\s+(?:one\s+|ones\s+)?of\s+(?:"
    rf"(?:these|those|them)(?:\s+{_HOW_MANY})?(?:\s+{_PAPERS})?{_LISTED}{_ENDS}(?!\s+{_INNER})"
    rf"|the\s+(?:(?:{_HOW_MANY}\s+)?{_PAPERS}|{_HOW_MANY}|above|(?:listed|cited)\s+{_PAPERS}){_LISTED}{_ENDS}"
    rf"(?!\s+(?:on|about|in|from|by|that|which|with|for|using|of|where|whose)\b|\s+{_INNER}))"
    r"|\b(?P<which>which)\s+(?:paper|one|ones|study)\s+(?:above|you\s+(?:listed|mentioned|cited|found))\b",
    re.IGNORECASE,
)
# "which of these should I read first?", "which of them is faster?": a judgement over all of them,
# read side by side rather than answered from one
_WEIGHS = re.compile(
    r"\b(?:better|best|worse|worst|faster|fastest|slower|slowest|recommend\w*|should\s+i|most|least|"
    r"more|less|larger|largest|smaller|smallest|bigger|biggest|compare\w*|differ\w*|first)\b",
    re.IGNORECASE,
)
# "which of them is newest?": the listed papers' years say
_AGE_WORD = re.compile(
    r"\b(?P<age>newer|newest|more\s+recent|most\s+recent|latest|older|oldest|earlier|earliest)\b", re.I
)
# "the newer one", "the older paper": of the listed papers, the one of that age
_BY_AGE = re.compile(
    r"\bthe\s+(?P<age>newer|newest|more\s+recent|most\s+recent|latest|older|oldest|earlier|earliest)\s+(?:one|paper|study|work|model)\b",
    re.IGNORECASE,
)

# "the bigger of the two", "that larger model", "the smallest one": of the listed papers, the one
# whose model is that size
_BY_SIZE = re.compile(
    r"\b(?:the|that|this)\s+(?P<size>bigger|larger|biggest|largest|smaller|smallest)\s+"
    r"(?:one|paper|model|network|of\s+(?:the|these|those|them)\b)",
    re.IGNORECASE,
)
# a model's size as an abstract states it: "540-billion parameter", "175B parameters", "OPT-175B"
_PARAMETERS = re.compile(
    r"(?<![\w.])(?P<n>\d+(?:\.\d+)?)\s*-?\s*(?P<unit>trillion|billion|million|[TBM])\b(?=[\s-]*param)"
    r"|(?<=[A-Za-z]-)(?P<n2>\d+(?:\.\d+)?)(?P<unit2>[TBM])\b",
    re.IGNORECASE,
)
_SCALE = {"t": 1e12, "trillion": 1e12, "b": 1e9, "billion": 1e9, "m": 1e6, "million": 1e6}


# (paper ids, words) -> per paper: how many of the words its full-text index holds, how often
WordsHeld = Callable[[list[str], list[str]], dict[str, tuple[int, int]]]
# names -> the corpus's papers whose title leads with one of them (agent.named.papers_called)
PapersCalled = Callable[[list[str]], list[str]]


class ChatPaper(BaseModel):
    """A paper an earlier answer cited: its number there, and what identifies it."""

    n: int
    paper_id: str
    title: str
    authors: list[str] = []
    year: int | None = None
    about: str = ""  # abstract and authors: what "the one from DeepMind" may match


class Resolved(BaseModel):
    papers: list[str]
    how: str  # for the step shown to the user
    # several papers in play fit a description equally ("the music one" of two music papers):
    # the reader reads each and answers from the one whose sentences answer best
    pick_one: bool = False
    # "which of these ...?": no paper is preferred, so the best answering is kept however small
    # its lead over the first listed
    among: bool = False
    # only a pronoun ties the question to the paper just discussed ("how much power does it use?"
    # may open a new topic): the reader weighs that paper against the search's first papers
    weak: bool = False


_THEY = re.compile(r"\b(?:they|them|their|theirs)\b", re.I)
_IT = re.compile(r"\b(?:it|its|this|that)\b", re.I)


def resolve(
    question: str,
    last: list[ChatPaper],
    focus: list[str],
    embedder: Embeds,
    earlier: list[ChatPaper] | None = None,
    held: WordsHeld | None = None,
    called: PapersCalled | None = None,
) -> Resolved | None:
    """The paper(s) a follow-up refers to, from `last` (the previous answer's numbered sources),
    `focus` (the papers the previous turn was about) and, for a description ("the scene
    classification paper"), `earlier` (papers cited before in the chat: a conversation may come
    back to one after a detour); `held` looks a description's words up in the papers' full text
    ("the finch study": zebra finches are named only in the body of the paper meant); `called`
    finds the corpus's papers called by a name ("the ZeRO paper" when ZeRO is not in play); None
    when it refers to none."""
    if not last:
        return None
    by_n = {p.n: p for p in last}
    numbers = [int(m.group("n") or m.group("m")) for m in _NUMBER.finditer(question)]
    picked = [by_n[n].paper_id for n in numbers if n in by_n]
    if picked:
        return Resolved(papers=list(dict.fromkeys(picked)), how="numbered source")
    ordinals = [
        m.group("ord").lower() for m in (*_ORDINAL.finditer(question), *_ORDINAL_ALONE.finditer(question))
    ]
    picked = [last[_ORDINALS[o]].paper_id for o in ordinals if -len(last) <= _ORDINALS[o] < len(last)]
    if len(picked) == 1:
        meant = _said_of_the_place(question, last, picked[0])
        if meant:
            return Resolved(papers=[meant], how="described")
    if picked:
        return Resolved(papers=list(dict.fromkeys(picked)), how="position in the previous answer")
    if numbers or ordinals:
        # "the third one" of an answer that numbered two: no paper of it is meant, and "it" in
        # the same question is not the paper just discussed (it was answered about the survey
        # just discussed, when the denoising paper was meant); searched like a new question
        return None
    if _OTHER.search(question) and focus:
        # Of several, the first listed: after "the first one: ...?", "the other one" is the second
        # (answers list their best matches first).
        others = [p for p in last if p.paper_id not in focus]
        if others:
            meant = _the_other_meant(question, others, last)
            return Resolved(papers=[meant.paper_id], how="the other paper")
    named = by_age_or_author(question, last)
    if named:
        return Resolved(papers=[named], how="described")
    if len(last) > 1 and _AMONG.search(question):
        listed = [p.paper_id for p in last]
        weighs = bool(_WEIGHS.search(question))  # read side by side, not answered from one
        return Resolved(papers=listed, how="one of the papers listed", pick_one=not weighs, among=True)
    shown = {p.paper_id for p in last}
    candidates = [*last, *(p for p in earlier or [] if p.paper_id not in shown)]
    names = system_names(question)
    if names:
        # "the ZeRO paper": the paper called ZeRO, when one in play is
        owning = [p.paper_id for p in candidates if any(is_called(n, p.title, p.about) for n in names)]
        if len(owning) == 1:
            return Resolved(papers=owning, how="named")
        # When none in play is called so and a paper of the corpus is, that one is meant: searched
        # like a new question ("How does the Microsoft ZeRO paper relate to Turing-NLG?" had been
        # read in OPT, for its "zero-shot" and its body's citing ZeRO). A name that no paper is
        # called by, or that a paper in play writes ("the KILT one" of a paper reporting KILT
        # results), may say what the paper used: left to the description rules below.
        shown_ids = {p.paper_id for p in candidates}
        written = any(writes(f"{p.title} {p.about}", n) for p in candidates for n in names)
        if not owning and not written and called is not None and set(called(names)) - shown_ids:
            return None
    words = descriptors(question)

    @cache
    def in_bodies() -> dict[str, tuple[int, int]]:
        """The description's words in the candidates' full text: one query, whichever rule asks."""
        if held is None or not 0 < len(words) <= BODY_TAG_WORDS:
            return {}
        return held([p.paper_id for p in candidates], words)

    described = _by_description(question, candidates, embedder, in_bodies)
    if described:
        return Resolved(papers=[described], how="described")
    if words:
        # A description ("the finch study", "the music one") that no single paper matched: it still
        # rules out papers it does not fit. "its method" in the same question is not the paper
        # just discussed unless that paper fits too (the finch question was answered from a bird
        # detection survey, the music one from an acoustic scenes paper).
        fits = [p.paper_id for p in candidates if _mentions(p, words) >= _needed(words)]
        if not fits:
            counts = in_bodies()
            fits = [p.paper_id for p in candidates if counts.get(p.paper_id, (0, 0))[0] == len(words)]
        if focus and focus[0] in fits:
            return Resolved(papers=focus[:1], how="the paper just discussed")
        if fits:
            return Resolved(papers=fits[:3], how="described", pick_one=len(fits) > 1)
        return None  # nothing in play fits: searched like a new question
    if asks_for_papers(question) and _THEY.search(question) and not _IT.search(question):
        # "which papers here compare surface codes ..., and how do they differ?": "they" are the
        # papers it asks for, not the last answer's (a chat read FlashAttention for it and wrote
        # that its passages "compare surface codes"); searched like a new question
        return None
    if _THIS.search(question) or len(topic_words(question)) <= 2:
        # "its results", "say it again", "can you explain more simply?": about the last answer
        weak = len(topic_words(question)) > 2 and not _THAT_PAPER.search(question)
        if focus:
            return Resolved(papers=focus[:1], how="the paper just discussed", weak=weak)
        return Resolved(papers=[last[0].paper_id], how="the previous answer's first source", weak=weak)
    return None


def _author_words(papers: list[ChatPaper]) -> set[str]:
    """The words of the papers' authors' names: a question's word that is one names no topic
    (PaLM's author Rewon Child made "child psychology" fit PaLM)."""
    return {w for p in papers for a in p.authors for w in re.findall(r"[a-z][\w-]{2,}", a.lower())}


def _the_other_meant(question: str, others: list[ChatPaper], last: list[ChatPaper]) -> ChatPaper:
    """Of a listing's papers besides the one just discussed, "the other one": the next listed,
    unless a word of the question is in the title of exactly one paper in play, one of the
    others, and nowhere in the next one's title, authors or abstract. The person counted the two
    papers they cared about, not the five we listed: "Is the attention in the other one an
    approximation?" after ZeRO was discussed had been read in OPT, listed second, not in
    FlashAttention, listed third. A word in two titles ("networks") tells no paper apart."""
    if len(others) < 2:
        return others[0]
    authors = _author_words(last)
    # a name the question writes ("Is the other one faster than FlashAttention?") is what the
    # paper meant is set against, not which paper it is
    written = {
        m.group(0).lower()
        for m in re.finditer(r"[A-Za-z][\w-]*", question)
        if not m.group(0).islower()
        and not (m.group(0)[1:].islower() and re.search(r"(?:^|[.?!:]\s+)$", question[: m.start()]))
    }
    # a listed paper's own name, however written ("compare with flashattention"), is that too
    leads = {n.lower() for p in last for n in names_in(p.title, "")}
    skipped = _CONNECTORS | _GENERIC | _NOT_DESCRIPTIVE | _MANNER | authors | written | leads
    words = sorted(
        w for w in topic_words(question) if len(w) > 2 and w not in skipped and not re.fullmatch(_NOUN, w)
    )

    in_titles = {w: [p for p in last if re.search(rf"\b{re.escape(w)}", p.title.lower())] for w in words}
    telling = {id(ps[0]): ps[0] for ps in in_titles.values() if len(ps) == 1}
    if len(telling) == 1:
        (meant,) = telling.values()
        if meant in others and meant is not others[0] and _mentions(others[0], words) == 0:
            return meant
    return others[0]


# what a follow-up says its paper did, the place it names being the subject: "The third paper
# borrowed an experiment from child psychology." (not "In the third one, what ...?")
_PLACE_DID = re.compile(rf"{_ORDINAL.pattern}\s+(?P<did>[a-z][^.?!;:]{{3,120}})", re.IGNORECASE)


_ASKS = re.compile(r"\b(?:what|which|how|why|when|where|who|whom|whose)\b", re.IGNORECASE)


def _said_of_the_place(question: str, last: list[ChatPaper], placed: str) -> str | None:
    """The paper a follow-up describes when that is not the one at the place it names: "The third
    paper borrowed an experiment from child psychology. What bias did it find?" after a listing
    whose third paper was PaLM and fourth the child-psychology study (the person counted the
    papers that fit, not those we listed; PaLM was read and its bias statement given). Only when
    the words said of it are in exactly one other listed paper's title or abstract, and in none of
    the placed paper's."""
    said = _PLACE_DID.search(question)
    # a statement ("... borrowed an experiment from child psychology."), not the question itself
    # ("The third paper uses what data?")
    if not said or not question[said.end() :].startswith(".") or _ASKS.search(said.group("did")):
        return None
    words = {
        w for w in re.findall(r"[a-z][\w-]{2,}", said.group("did").lower())
        if w not in _CONNECTORS | _FILLER | _GENERIC | _NOT_DESCRIPTIVE
    }  # fmt: skip
    # not a name: PaLM's author Rewon Child made "child psychology" fit PaLM
    names = _author_words(last)
    words -= names
    if not words:
        return None
    held = {p.paper_id: _mentions(p, sorted(words)) for p in last}
    if held.get(placed, 0) > 0:
        return None
    # one word of its title ("child psychology": "Cognitive Psychology for Deep Neural Networks"),
    # else two of its abstract: one word of an abstract ("uses data") tells no paper apart
    in_title = {
        p.paper_id: sum(bool(re.search(rf"\b{re.escape(w)}", p.title.lower())) for w in words) for p in last
    }
    fits = [pid for pid, n in held.items() if in_title[pid] >= 1 or n >= max(2, _needed(words))]
    return fits[0] if len(fits) == 1 else None


# a plural verb said of one paper ("do any of them use ...?" -> "does this paper use ...?")
_SINGULAR_VERB = {"do": "does", "are": "is", "were": "was", "have": "has"}


def asked_of_each(question: str) -> str:
    """A "which of these" question as it is asked of each paper read: "Which of them uses patches
    as tokens?" -> "In this paper, what uses patches as tokens?" (asked as it was, the model, shown
    one paper, wrote five times "this sentence states ...")."""
    found = _AMONG.search(question)
    if not found:
        return question
    lead = (found.group("lead") or found.group("which") or "").lower()
    before, after = question[: found.start()].rstrip(), question[found.end() :]
    if lead.startswith("which"):
        if re.search(r"\b(?:in|for|on|to|from|with|by|at|of)$", before, re.I):
            return f"In this paper: {question}"  # "In which of these is dropout used?"
        return f"{before} in this paper, what{after}" if before else f"In this paper, what{after}"
    # "do any of them use ...?" -> "does this paper use ...?"
    verb = re.search(r"\b(do|are|were|have)\s+$", before + " ", re.I)
    if verb:
        said = verb.group(1)
        singular = _SINGULAR_VERB[said.lower()]
        before = before[: verb.start()] + (singular.capitalize() if said[0].isupper() else singular) + " "
    else:
        before = f"{before} " if before else ""
    asked = f"{before}this paper{after}"
    return asked[:1].upper() + asked[1:]


# A question over several papers as it is asked of each one read (the map step): the 1.5B model,
# shown one paper's sentences and asked "... and how do their aims differ?", wrote how "the first
# paper" and "the second paper" differ under one paper's mark, or a difference none of its
# sentences gave ("the Primer uses a different type of attention mechanism") in 7 of the
# benchmark's 12 cross-paper answers. Asked of one paper, "how do their aims differ" is "what are
# its aims"; "how do they differ" asks nothing of one paper; the last step says how they differ.
_SEVERAL_PAPERS = r"(?:papers|works|studies|models|approaches|methods|systems|tools|ones)"
_DIFFER_IN = re.compile(
    r"^(?:and\s+)?how\s+(?:do|did|does)\s+(?:their\s+(?P<what>[^?]+?)\s+(?:differ|compare|contrast)\w*"
    rf"|(?:they|these|the\s+(?:two|three|four)(?:\s+{_SEVERAL_PAPERS})?)\s+(?:differ|compare|contrast)\w*"
    r"\s+(?:in|on)\s+(?:their\s+)?(?!what|how|which|why|whom?|where|when)(?P<what_in>[^?]+?))\s*$",
    re.I,
)
_DIFFERENTLY = re.compile(
    rf"^(?:and\s+)?how\s+(?:do|did)\s+(?:they|the\s+(?:two|three|four)(?:\s+{_SEVERAL_PAPERS})?)\s+"
    r"(?P<does>[^?]+?)\s+differently\s*$",
    re.I,
)
# "How does Paper Plain's approach ... compare with CiteSee's, in terms of who the reader is ...?"
_IN_TERMS_OF = re.compile(r"\b(?:compare[sd]?|differ)\b.*?,?\s+in\s+terms\s+of\s+(?P<what>[^?]+)$", re.I)
_COMPARING = re.compile(
    r"\b(?:compare[sd]?|comparison|differ\w*|contrast\w*|versus|vs\.?|in\s+common)\b", re.I
)
_WHICH_PAPERS = re.compile(
    rf"^(?:which|what)\s+{_SEVERAL_PAPERS}\s+(?:(?:in|of)\s+(?:the|this|your)\s+(?:corpus|collection|library)"
    r"\s+|here\s+)?(?P<does>.+)$",
    re.I,
)
_QUESTION_SENTENCES = re.compile(r"(?<=[?.!])\s+(?=[A-Z])")
_AND_PART = re.compile(r",?\s+and\s+(?=(?:how|what|why|which|where|when|whether)\b)", re.I)
_OF_ONE = (
    (re.compile(r"\bin\s+each(?:\s+(?:one|of\s+them|paper))?\b", re.I), "in this paper"),
    (re.compile(r"\beach\s+(?:one|of\s+them|paper)\b", re.I), "this paper"),
    (re.compile(r"\beach\s+(?=[a-z])", re.I), "its "),  # "what support each tool adds"
    (re.compile(rf"\b(?:both|the\s+two|these|all)\s+{_SEVERAL_PAPERS}\b", re.I), "this paper"),
    (re.compile(r"\b(?:they|the\s+two)\b", re.I), "this paper"),
    (re.compile(r"\btheir\b", re.I), "its"),
    (re.compile(r"\s+(?:each|both)\b(?=\s)", re.I), ""),  # "do it in each", "X and Y both report"
)


def _be(what: str) -> str:
    """ "is" or "are" for a noun phrase: by its head ("mechanisms for adapting ..." -> are)."""
    head = re.split(r"\s+(?:for|of|in|on|to|that|which|with)\s+", what)[0].split()[-1]
    return "are" if head.endswith("s") and not head.endswith("ss") else "is"


def _part_of_one(part: str) -> str:
    """One part of a question over several papers as asked of one; "" when it asks only how
    they differ."""
    asked = part.strip().rstrip("?.").strip()
    differ = _DIFFER_IN.match(asked)
    if differ:
        what = (differ.group("what") or differ.group("what_in")).strip()
        return f"what {_be(what)} its {what}"
    differently = _DIFFERENTLY.match(asked)
    if differently:
        return f"how does it {differently.group('does')}"
    terms = _IN_TERMS_OF.search(asked)
    if terms:
        asked = f"in this paper, {terms.group('what')}"
    elif _COMPARING.search(asked):
        return ""
    else:
        which = _WHICH_PAPERS.match(asked)
        if which:
            return f"how does this paper {which.group('does')}"
    for pattern, said in _OF_ONE:
        asked = pattern.sub(said, asked)
    return re.sub(
        r"\b(do|are|were|have)\s+this paper\b",
        lambda verb: f"{_SINGULAR_VERB[verb.group(1).lower()]} this paper",
        asked,
        flags=re.I,
    )


def asked_of_one(question: str) -> str:
    """A question over several papers as it is asked of each: "Which papers in the corpus work with
    recordings of jackdaws, and how do their aims differ?" -> "How does this paper work with
    recordings of jackdaws, and what are its aims?"; the question itself when nothing of it is
    left to ask of one paper ("How do ZeRO and FlashAttention compare?")."""
    said: list[str] = []
    for sentence in _QUESTION_SENTENCES.split(question.strip()):
        parts = [p for p in (_part_of_one(x) for x in _AND_PART.split(sentence)) if p]
        if parts:
            joined = ", and ".join(parts)
            said.append(joined[:1].upper() + joined[1:] + ("?" if sentence.rstrip().endswith("?") else "."))
    return " ".join(said) if any(s.endswith("?") for s in said) else question


# "Is the original distillation paper in the collection too?", "Do you have the Adam paper?": asks
# whether the corpus holds a paper, another than the one the turn points back at ("That second
# paper builds on an older idea ... Is the original ... in the collection too?")
_PLACE = r"(?:collection|corpus|library|database|index)"
_HELD = re.compile(
    rf"\b(?:is|are)\s+(?:there\s+)?(?:the|a|an|any)\s+(?:[\w'’-]+\s+){{0,6}}?"
    rf"(?:paper|papers|article|study|work)\s+(?:[\w'’-]+\s+){{0,10}}?(?:in|part\s+of)\s+(?:the|this|your|our)\s+{_PLACE}\b"
    rf"|\bdo(?:es)?\s+(?:you|the\s+{_PLACE})\s+(?:also\s+)?(?:have|hold|include|contain)\s+(?:the|a|an|any)\s+"
    rf"(?:[\w'’-]+\s+){{0,6}}?(?:paper|article|study)\b",
    re.IGNORECASE,
)


def asks_if_held(question: str) -> bool:
    """Whether the question asks if the corpus holds a paper it describes."""
    return bool(_HELD.search(question))


def refers_back(question: str) -> bool:
    """Whether a question points at a paper of the chat ("it", "the third one", "the finch
    study"), resolved or not."""
    return bool(_THIS.search(question) or _OTHER.search(question) or position(question) is not None
                or _AMONG.search(question) or descriptors(question))  # fmt: skip


def position(question: str) -> int | None:
    """The place in the previous answer's list that a follow-up names ("the second one": 1, "[3]":
    2, "the last one": -1), or None."""
    number = _NUMBER.search(question)
    if number:
        return int(number.group("n") or number.group("m")) - 1
    ordinal = _ORDINAL.search(question) or _ORDINAL_ALONE.search(question)
    return _ORDINALS[ordinal.group("ord").lower()] if ordinal else None


_FILLER = frozenset(
    "the a an and or but of to in on for with about what which how why when who is are was were do "
    "does did can could would should will be been it its this that these those there here you your "
    "me my we our they them their onto into upon please more again also just so then than tell say "
    "explain simply simpler detail details example examples mean means".split()
)


# "say it again", "explain more simply", "give a concrete example", "in plain English?", "TL;DR":
# every topic word says how to put the previous answer, none says what to ask about
_MANNER = frozenset(
    "again shorter short brief briefly plain english terms words sentence sentences example concrete "
    "detail further specific understand don confused huh sorry continue go break down dumb differently "
    "another way put tl dr tldr eli5 layman rephrase reword elaborate expand clarify summarize summarise "
    "one give make non-expert beginner analogy practice like five bit jargon without please".split()
)


def restates(question: str) -> bool:
    """Whether a follow-up asks for the previous answer again, put otherwise, rather than asks
    something new ("What resolution were those patches?" was read as "say it again": two topic
    words, and the answer repeated the previous one; "what was the batch size again?" asks anew)."""
    return all(w in _MANNER or w.startswith("simpl") for w in topic_words(question))


def topic_words(question: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z0-9-]+", question.lower()) if w not in _FILLER]


_NOT_DESCRIPTIVE = frozenset("one that which with from about this other same".split()) | set(_ORDINALS)


def by_age_or_author(question: str, last: list[ChatPaper]) -> str | None:
    """The listed paper a follow-up names by its age ("the newer one"), its model's size ("the
    bigger of the two") or an author ("the Vaswani et al. paper", "White's paper"), when exactly
    one fits."""
    size = _BY_SIZE.search(question)
    if size:
        biggest_or_smallest = _by_size(size.group("size"), last)
        if biggest_or_smallest:
            return biggest_or_smallest
    age = _BY_AGE.search(question) or (_AGE_WORD.search(question) if _AMONG.search(question) else None)
    if age:
        oldest_or_newest = _by_age(age.group("age"), last)
        if oldest_or_newest:
            return oldest_or_newest
    author = _BY_AUTHOR.search(question)
    if author:
        name = (author.group("name") or author.group("owner") or author.group("on")).lower()
        fits = [p for p in last if any(name in a.lower().split() for a in p.authors)]
        if len(fits) == 1:
            return fits[0].paper_id
    return _by_surnames(question, last)


def _by_age(age: str, last: list[ChatPaper]) -> str | None:
    """The newest or oldest listed paper, when its year is the only one that extreme."""
    known = [p.year for p in last if p.year is not None]
    if len(known) != len(last):
        return None
    newest = " ".join(age.lower().split()) in ("newer", "newest", "more recent", "most recent", "latest")
    extreme = (max if newest else min)(known)
    # the others may share a year; the one meant may not
    return last[known.index(extreme)].paper_id if known.count(extreme) == 1 else None


def model_size(paper: ChatPaper) -> float | None:
    """The largest model size, in parameters, that a paper's title or abstract states."""
    sizes = [
        float(m.group("n") or m.group("n2")) * _SCALE[(m.group("unit") or m.group("unit2")).lower()]
        for m in _PARAMETERS.finditer(f"{paper.title} {paper.about}")
    ]
    return max(sizes) if sizes else None


def _by_size(size: str, last: list[ChatPaper]) -> str | None:
    """The listed paper with the biggest (or smallest) model, when at least two state a size and
    that size is the only one that extreme (PaLM's 540 billion parameters against OPT's 175B)."""
    known = [(s, p.paper_id) for p in last if (s := model_size(p)) is not None]
    if len(known) < 2:
        return None
    bigger = size.lower() in ("bigger", "larger", "biggest", "largest")
    extreme = (max if bigger else min)(s for s, _ in known)
    fits = [pid for s, pid in known if s == extreme]
    return fits[0] if len(fits) == 1 else None


_CAPITALISED = re.compile(r"\b[A-Z][a-z][a-z'-]+\b")


def _by_surnames(question: str, last: list[ChatPaper]) -> str | None:
    """ "which models did Ritter and Barrett test?", "the results by Karpukhin": the one listed
    paper whose authors' surnames the question names: two of them, or one after "by" or "from". A
    surname alone is too often a word or a thing's name ("trained with Adam", "the Long Range
    Arena results"), a name on several listed papers says nothing, and "this paper" wins. Names
    are capitalised, three letters or more ("He" and "Lo" are surnames too), not a question's first
    word, and not part of a run of capitalised words."""
    if _THAT_PAPER.search(question):
        return None
    surnames = {p.paper_id: {a.split()[-1].lower() for a in p.authors if a.split()} for p in last}
    named: set[str] = set()
    hit: set[str] = set()
    cued = False
    for m in _CAPITALISED.finditer(question):
        before, after = question[: m.start()], question[m.end() :]
        if m.start() == 0 or re.search(r"[A-Z][\w'-]*\s+$", before) or re.match(r"\s+[A-Z]", after):
            continue
        name = m.group(0).lower().removesuffix("'s")
        on = {pid for pid, names in surnames.items() if name in names}
        if len(on) == 1:
            named.add(name)
            hit |= on
            cued = cued or bool(re.search(r"\b(?:by|from)\s+$", before, re.IGNORECASE))
    return hit.pop() if len(hit) == 1 and (len(named) >= 2 or cued) else None


_PAPER_NOUNS = frozenset({"one", "paper", "article", "survey", "review"})


def _is_system_name(word: str) -> bool:
    """A word written as a system's or model's name: capitals inside it or with a digit ("ZeRO",
    "OPT", "PaLM", "GPT-3", "T5"); not a capitalised word ("Microsoft", "Google"), which may be
    an affiliation the paper's front page names."""
    capitals = sum(c.isupper() for c in word)
    return capitals >= 2 or (capitals == 1 and any(c.isdigit() for c in word))


def writes(text: str, name: str) -> bool:
    """The name as a word of the text, as written ("RNNs" writes "RNN"; "zero-shot" not "ZeRO")."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?:e?s)?(?![A-Za-z0-9])", text) is not None


def system_names(question: str) -> list[str]:
    """The names a follow-up calls its paper by, just before the noun: "the ZeRO paper", "the
    Microsoft ZeRO paper" -> [ZeRO]; not what follows it ("the one evaluated on CIFAR-10": a
    dataset the paper used, not its name)."""
    m = _FRONTED.search(question) or _DESCRIBED.search(question)
    if not m:
        return []
    return [w for w in re.findall(r"[A-Za-z0-9][\w-]*", m.group("desc") or "") if _is_system_name(w)]


def without_description(question: str, described: bool = False) -> str:
    """The question with what it says to pick its paper ("the one from DeepMind", "the Google one",
    "the music one") put as "this paper", once the paper is known: the description's words
    otherwise weigh in choosing the sentences that answer (the sentences naming DeepMind's
    affiliation over the one giving the database's size). "The lab study", "the best system"
    stay: they say what is asked. `described`: the description picked the paper, so "the
    paper-search agent" or "the citation tool" is the paper too (its words had chosen PaSa's
    sentences that introduce a paper search agent over those on how it was trained). A name in it
    ("the Crawler agent", "the GLRM framework") or a follow-up picked otherwise: what is asked about.
    """

    def this_paper(m: re.Match) -> str:
        noun = m.group("noun").lower()
        desc = m.group("desc").strip()
        system = described and desc and desc.islower() and re.fullmatch(_SYSTEM_NOUN, noun)
        return "this paper" if noun in _PAPER_NOUNS or system else m.group(0)

    return _DESCRIBED.sub(this_paper, _FRONTED.sub(this_paper, question))


def described_as(question: str) -> str:
    """What a follow-up says of the paper it means ("finch", "Google", "survey"), or ""."""
    m = _FRONTED.search(question) or _DESCRIBED.search(question)
    if not m:
        return ""
    noun = m.group("noun").lower()
    description = f"{m.group('desc') or ''} {noun if noun in _TELLING_NOUNS else ''} {m.group('rest') or ''}"
    found = re.findall(r"[A-Za-z][\w-]{2,}", description)
    words = [_HOW_MADE.sub("", w) for w in found if w.lower() not in _NOT_DESCRIPTIVE]
    return " ".join(dict.fromkeys(words))


# "the search-based one": what it is based on is what a paper's title or abstract says ("Searching
# for Efficient Transformers"), not the compound (conv-12's follow-up matched no paper in play and
# was searched, then answered with the description in its question). Not "-free" ("attention-free"
# is no paper about attention).
_HOW_MADE = re.compile(
    r"-(?:based|driven|powered|oriented|style|like|inspired|guided|aware|centric|centred|centered|focused)$",
    re.I,
)


_CONNECTORS = frozenset(
    "from by about on with that which where in whose who using used evaluated benchmarked trained "
    "tested".split()
)
# words that say nothing of which paper is meant ("this new approach", "the original paper")
_GENERIC = frozenset(
    "new novel proposed original main previous above mentioned whole entire specific particular "
    "actual same first second third last experiment experiments result results earlier before "
    "previously already class lecture".split()
)


def descriptors(question: str) -> list[str]:
    """The content words of what a follow-up says of its paper: "the finch study" -> [finch],
    "the one from Meta" -> [meta]; "the method used in it" -> [] (no description of a paper)."""
    words = described_as(question).lower().split()
    return [w for w in words if w not in _CONNECTORS | _FILLER | _GENERIC]


def _mentions(paper: ChatPaper, words: list[str]) -> int:
    """How many of the words a paper's title, authors or abstract hold (as a word start: "music"
    fits "musical", not "amusing")."""
    text = f"{paper.title} {' '.join(paper.authors)} {paper.about}".lower()
    return sum(bool(re.search(rf"\b{re.escape(w)}", text)) for w in words)


def _needed(words: list[str] | set[str]) -> int:
    """How many of a description's words a paper must hold: one for "the finch study"; a third of
    a longer description ("the one where optimizer states are partitioned across GPUs" is not the
    Transformer paper because its abstract says "eight P100 GPUs")."""
    return max(1, -(-len(words) // 3))


# A description looked up in the papers' bodies is a tag of a word or two ("the finch study", "the
# ASR one"), every word of it in the body: "the soft targets of a large one" describes no paper,
# and one common word ("detection" of "the bird detection survey") is in many bodies.
BODY_TAG_WORDS = 2


def _by_description(
    question: str,
    last: list[ChatPaper],
    embedder: Embeds,
    in_bodies: Callable[[], dict[str, tuple[int, int]]] | None = None,
) -> str | None:
    """ "the one from DeepMind", "the finch study", "the recurrent one": the earlier source whose
    title, abstract and authors the description matches clearly best; else the one paper whose
    full text holds the description's words (`in_bodies`: per paper, words held and how often);
    else the closest by meaning."""
    description = described_as(question)
    if not description or len(last) < 2:
        return None
    # "the", "they", "here" and "experiments" tell no paper apart; a description of nothing else
    # ("the paper cited here, ...") describes no paper
    words = {w for w in description.lower().split() if w not in _FILLER | _GENERIC}
    if not words:
        return None
    # inside words too: PDF text glues marks to names ("1deepmind, london") and words to words
    # ("geostatistics" for "the one that borrows a statistic from geography")
    lexical = [sum(w in f"{p.title} {p.about}".lower() for w in words) for p in last]
    if max(lexical) >= _needed(words) and lexical.count(max(lexical)) == 1:
        return last[lexical.index(max(lexical))].paper_id
    if in_bodies is not None and max(lexical) == 0:
        # Before the meaning match, which put "the finch study" on a corvid paper ("songbirds"):
        # the words a person remembers a paper by are often in its body only.
        ranked = sorted(in_bodies().items(), key=lambda kv: kv[1], reverse=True)
        if ranked and ranked[0][1][0] == len(descriptors(question)):
            best, (words_in, times) = ranked[0]
            runner_in, runner_times = ranked[1][1] if len(ranked) > 1 else (0, 0)
            # one paper holds more of the words, or names them far more often (the finch paper
            # names zebra finches throughout; a corvid paper once, among other songbirds)
            if words_in > runner_in or times >= 2 * runner_times:
                return best
    query = embedder.embed_query(description)
    sims = [float(np.dot(query, embedder.embed_query(f"{p.title}. {p.about[:400]}"))) for p in last]
    order = sorted(range(len(last)), key=lambda i: -sims[i])
    # 0.35, not 0.25: at 0.25 "the one where optimizer states are partitioned across GPUs" was
    # put on FlashAttention when ZeRO was not listed (0.33); a wrong paper is worse than none,
    # which sends the question to the search (bench/followups.py: 0.82 -> 0.78 right, 0 wrong).
    if sims[order[0]] >= 0.35 and sims[order[0]] - sims[order[1]] >= 0.05:
        return last[order[0]].paper_id
    return None
