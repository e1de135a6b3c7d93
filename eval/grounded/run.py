"""Run grounded-QA cases through chatpapers and score every turn.

Two levels, both over the real database:
- retrieval only (no language model, seconds): each turn's question (a follow-up rewritten from
  the conversation as the agent would) goes to the `search` tool; recall@5 and MRR of the gold
  papers. Cheap enough to compare retrieval modes side by side on every case.
- full answers (the configured chat model): each case is a chat; every turn is asked in order and
  scored first on what the answer says (the turn's answer key: does it state every key fact?), then
  on its retrieved papers, citations, follow-up resolution, abstention, grounding and time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable

from pydantic import BaseModel

from agent.events import ErrorEvent, Final
from agent.reading import FOLLOW_UP_ABSTRACT_SENTENCES, LISTED_SENTENCES, PASSAGES
from agent.references import described_as, position
from agent.session import ChatService
from agent.tools import ToolContext
from agent.tools.paper import InformationFromPaper, InformationInput
from agent.tools.search import Search, SearchInput
from corpus import chats as chat_store
from eval.grounded.cases import Case, CaseTurn, KeyFact

BENCH_OWNER = "grounded-bench"


class TurnScore(BaseModel):
    case_id: str
    kind: str
    turn: int
    question: str
    gold: list[str]
    refers_to: str | None = None
    key: list[KeyFact] = []  # what a right answer states
    acceptable: list[str] = []  # papers a listing may name: gold and others that fit
    key_stated: list[bool] = []  # per key fact, whether the answer states it
    quoted: bool = False  # passages were quoted in place of (part of) the model's text
    retrieved: list[str] = []  # papers in the order the turn's tools showed them
    cited: list[str] = []
    read: list[str] = []
    abstained: bool = False
    answer: str = ""
    sentences: int | None = None  # answer sentences that state something checkable
    supported: int | None = None  # of those, supported by a cited or returned passage
    # the model's draft, before the revision left out what no passage supports
    draft_sentences: int | None = None
    draft_supported: int | None = None
    unsupported: list[str] = []  # still in the answer
    left_out: list[str] = []  # left out of the draft
    seconds: float = 0.0
    error: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.gold)

    @property
    def turn_kind(self) -> str:
        """single, cross, listing (a conversation's opening), follow-up, unanswerable."""
        if self.kind != "conversation":
            return self.kind
        return "follow-up" if self.refers_to else "listing"

    @property
    def correct(self) -> bool | None:
        """The headline: the answer states every key fact of the turn."""
        if not self.answerable or not self.key or self.error is not None:
            return None if self.error is None else False
        return all(self.key_stated)

    @property
    def listed_ok(self) -> tuple[int, int]:
        """(cited papers that are acceptable, cited papers) of an answerable turn."""
        if not self.answerable:
            return 0, 0
        allowed = set(self.acceptable or self.gold)
        return sum(p in allowed for p in self.cited), len(self.cited)

    @property
    def recall_at_5(self) -> float | None:
        if not self.gold:
            return None
        return sum(p in self.retrieved[:5] for p in self.gold) / len(self.gold)

    @property
    def reciprocal_rank(self) -> float | None:
        if not self.gold:
            return None
        ranks = [self.retrieved.index(p) + 1 for p in self.gold if p in self.retrieved]
        return 1.0 / min(ranks) if ranks else 0.0

    @property
    def gold_cited(self) -> float | None:
        if not self.gold:
            return None
        return sum(p in self.cited for p in self.gold) / len(self.gold)

    @property
    def resolved(self) -> bool | None:
        """A follow-up that refers back: did the turn work from the paper meant?"""
        if not self.refers_to:
            return None
        return self.refers_to in self.cited or self.refers_to in self.read

    @property
    def abstention_correct(self) -> bool:
        return self.abstained != self.answerable

    @property
    def support_share(self) -> float | None:
        if not self.sentences:
            return None
        return (self.supported or 0) / self.sentences


def _mean(values: Iterable[float | bool | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


TURN_KINDS = ("single", "cross", "listing", "follow-up")


def summary(scores: list[TurnScore]) -> dict[str, float | int | None]:
    """The benchmark's overall figures (each averaged over the turns it applies to). Content first:
    whether answers state the facts asked, per kind of turn and overall."""
    seconds = sorted(s.seconds for s in scores if s.error is None)
    answerable = [s for s in scores if s.answerable]
    keyed = [s for s in answerable if s.key]
    listed = [s.listed_ok for s in answerable]
    content: dict[str, float | int | None] = {
        "answer_correct": _mean(s.correct for s in keyed),
        **{f"answer_correct_{k}": _mean(s.correct for s in keyed if s.turn_kind == k) for k in TURN_KINDS},
        "key_facts_stated": _mean(v for s in keyed for v in s.key_stated),
        "listed_precision": sum(a for a, _ in listed) / sum(n for _, n in listed)
        if any(n for _, n in listed)
        else None,
        "quoted_answers": _mean(s.quoted for s in scores if s.answerable and s.error is None),
        "keyed_turns": len(keyed),
    }
    supported = sum(s.supported or 0 for s in scores)
    checked = sum(s.sentences or 0 for s in scores)
    draft_supported = sum(s.draft_supported or 0 for s in scores)
    draft_checked = sum(s.draft_sentences or 0 for s in scores)
    return {
        **content,
        "turns": len(scores),
        "errors": sum(s.error is not None for s in scores),
        "recall_at_5": _mean(s.recall_at_5 for s in answerable),
        "mrr": _mean(s.reciprocal_rank for s in answerable),
        "gold_cited": _mean(s.gold_cited for s in answerable),
        "followups_resolved": _mean(s.resolved for s in scores),
        "abstention_correct": _mean(s.abstention_correct for s in scores),
        "unanswerable_abstained": _mean(s.abstained for s in scores if not s.answerable),
        "answerable_abstained": _mean(s.abstained for s in answerable),
        "supported_sentences": supported / checked if checked else None,
        "draft_supported_sentences": draft_supported / draft_checked if draft_checked else None,
        "revised_answers": _mean(bool(s.left_out) for s in scores if s.draft_sentences),
        "seconds_p50": statistics.median(seconds) if seconds else None,
        "seconds_p95": _percentile(seconds, 95),
        "seconds_max": seconds[-1] if seconds else None,
    }


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    k = (len(values) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def _score(case: Case, n: int, turn: CaseTurn, swap: dict[str, str] | None = None) -> TurnScore:
    swap = swap or {}
    return TurnScore(
        case_id=case.id,
        kind=case.kind,
        turn=n,
        question=turn.question,
        gold=[swap.get(p, p) for p in turn.gold_papers],
        refers_to=swap.get(turn.refers_to, turn.refers_to) if turn.refers_to else None,
        # a key states facts of the paper the case meant; when the answer's numbering makes the
        # turn mean another paper, the key does not apply (the turn is left out of answer correct)
        key=[] if any(swap.get(f.paper, f.paper) != f.paper for f in turn.key) else turn.key,
        acceptable=sorted(swap.get(p, p) for p in turn.acceptable),
    )


def answer_cases(
    service: ChatService, cases: list[Case], on_turn: Callable[[TurnScore], None] = lambda s: None
) -> list[TurnScore]:
    """Every case as one chat, its turns asked in order."""
    scores: list[TurnScore] = []
    for case in cases:
        with service.db.pooled() as conn:
            chat = chat_store.create_chat(conn, BENCH_OWNER, title=case.id)
        swap: dict[str, str] = {}
        shown: list[str] = []  # the previous answer's numbered sources
        for n, turn in enumerate(case.turns, 1):
            swap = _follow_numbering(turn, shown, case.turns[0].gold_papers, swap)
            # a paper named by its place or a pronoun ("the third one", "its results") follows the
            # answer's numbering; one named by what it is ("the finch study") is the one described
            score = _score(case, n, turn, swap if _by_place(turn.question) else None)
            started = time.perf_counter()
            for event in service.ask(chat.chat_id, BENCH_OWNER, turn.question):
                if isinstance(event, Final):
                    _record_final(score, event)
                    shown = [s.paper_id for s in event.sources]
                elif isinstance(event, ErrorEvent):
                    score.error = event.message
            score.seconds = time.perf_counter() - started
            scores.append(score)
            on_turn(score)
    return scores


def _by_place(question: str) -> bool:
    """Whether a follow-up names its paper by place or pronoun, not by what the paper is."""
    return not described_as(question)


def _follow_numbering(
    turn: CaseTurn, shown: list[str], listed: list[str], swap: dict[str, str]
) -> dict[str, str]:
    """The cases assume that an answer numbers its papers in the order of the gold list ("the first
    one" is the first gold paper); a user means the first paper of the answer they read. When the
    answer numbered two of the listed papers the other way round, the conversation's later papers
    are swapped to follow it."""
    where = position(turn.question)
    if where is None or not turn.refers_to or not shown or not -len(shown) <= where < len(shown):
        return swap
    meant, assumed = shown[where], swap.get(turn.refers_to, turn.refers_to)
    if meant == assumed or meant not in listed:
        return swap
    relabel = {assumed: meant, meant: assumed}
    return {paper: relabel.get(swap.get(paper, paper), swap.get(paper, paper)) for paper in {*listed, *swap}}


def answer_body(answer: str) -> str:
    """What the answer says, without the sources line added under it (titles state no fact)."""
    return answer.split("\n\nSources: ")[0]


def _record_final(score: TurnScore, final: Final) -> None:
    score.answer = final.answer
    score.cited = list(final.citations)
    score.abstained = final.abstained
    body = answer_body(final.answer)
    score.key_stated = [fact.stated_in(body) for fact in score.key]
    if final.state is not None:
        score.retrieved = list(final.state.papers)
        score.read = list(final.state.read)
    if final.grounding is not None:
        grounding = final.grounding
        score.sentences, score.supported = grounding.checked, grounding.supported
        score.unsupported, score.left_out = grounding.unsupported, grounding.left_out
        score.quoted = grounding.quoted
        revised = grounding.draft_checked is not None
        score.draft_sentences = grounding.draft_checked if revised else grounding.checked
        score.draft_supported = grounding.draft_supported if revised else grounding.supported


def retrieve_cases(ctx: ToolContext, cases: list[Case], k: int = 10) -> list[TurnScore]:
    """Retrieval only: every answerable turn's question through the `search` tool (follow-ups as
    the agent would search for them, with the conversation's papers in mind)."""
    scores = []
    for case in cases:
        for n, turn in enumerate(case.turns, 1):
            score = _score(case, n, turn)
            started = time.perf_counter()
            result = Search().run(ctx, SearchInput(query=turn.question, k=k))
            score.seconds = time.perf_counter() - started
            score.retrieved = result.paper_ids()
            scores.append(score)
    return scores


def evidence_cases(
    ctx: ToolContext, cases: list[Case], sentences: int = 6
) -> list[tuple[str, int, int, int]]:
    """The narrow reader's evidence without a model: for every keyed turn, each key fact's paper
    read for the question as the reader reads it; (case id, turn, key facts, of those stated in
    the sentences selected). The ceiling of what a model writing from them can state. `sentences`
    for a turn about one paper; a turn over several is read as the reader reads each of them."""
    out = []
    for case in cases:
        for n, turn in enumerate(case.turns, 1):
            if not turn.key:
                continue
            several = len(turn.gold_papers) > 1  # read paper by paper, as the reader reads them
            per_paper = LISTED_SENTENCES if several else sentences
            texts: dict[str, str] = {}
            for paper in dict.fromkeys(f.paper for f in turn.key):
                # as the reader reads a follow-up about a paper in play: with its abstract's best
                abstract = FOLLOW_UP_ABSTRACT_SENTENCES if n > 1 and turn.refers_to and not several else 0
                read = InformationFromPaper().run(
                    ctx,
                    InformationInput(
                        paper_id=paper,
                        query=turn.question,
                        k=PASSAGES,
                        sentences=per_paper,
                        abstract=abstract,
                    ),
                )
                texts[paper] = " ".join(s.text for s in read.sentences)
            out.append((case.id, n, len(turn.key), sum(f.stated_in(texts[f.paper]) for f in turn.key)))
    return out
