"""The grounded-QA benchmark: its cases, its scoring, and a sub-sample run end to end."""

from __future__ import annotations

import pytest

from agent.events import Final
from agent.session import ChatService
from agent.tools import ToolContext
from corpus.db import Database
from corpus.embedder import Embedder
from eval.grounded.cases import Case, CaseTurn, Evidence, KeyFact, load_cases
from eval.grounded.run import (
    TurnScore,
    _by_place,
    _follow_numbering,
    _record_final,
    answer_cases,
    retrieve_cases,
    summary,
)
from tests.conftest import SUBSET

IN_SUBSET = {name.split("v")[0] for name in SUBSET}


def test_the_shipped_cases_have_what_the_benchmark_promises() -> None:
    cases = load_cases()
    kinds = [c.kind for c in cases]
    assert len(cases) >= 80 and kinds.count("unanswerable") >= 15 and kinds.count("cross") >= 5
    conversations = [c for c in cases if c.kind == "conversation"]
    assert len(conversations) >= 15 and all(len(c.turns) >= 3 for c in conversations)
    assert all(any(t.refers_to for t in c.turns[1:]) for c in conversations)
    assert all(e.quote for c in cases for t in c.turns for e in t.evidence)


def test_every_answerable_turn_has_an_answer_key_that_the_question_alone_does_not_meet() -> None:
    """The headline figure reads what an answer says: every answerable turn says what a right
    answer states, and repeating the question (or saying nothing) states none of it."""
    turns = [(c, t) for c in load_cases() for t in c.turns if t.answerable]
    assert len(turns) >= 170
    assert all(t.key for _, t in turns), [c.id for c, t in turns if not t.key]
    for case, turn in turns:
        assert 1 <= len(turn.key) <= 3, case.id
        for fact in turn.key:
            assert fact.paper in turn.gold_papers
            assert not fact.stated_in(turn.question), (case.id, fact.fact)
            assert not fact.stated_in("I could not find this in the papers I read."), (case.id, fact.fact)


def _turn(question: str, gold: list[str], refers_to: str | None = None) -> CaseTurn:
    return CaseTurn(
        question=question,
        gold_papers=gold,
        refers_to=refers_to,
        evidence=[Evidence(paper=p, quote="a quote copied from the paper itself") for p in gold],
    )


def test_ordinal_follow_ups_follow_the_answers_own_numbering() -> None:
    # the case assumes A was listed first; the answer numbered B first, so "the first one" is B and
    # "the other one" is then A
    first = _turn("In the first one, what is measured?", ["A"], refers_to="A")
    swap = _follow_numbering(first, shown=["B", "A", "C"], listed=["A", "B"], swap={})
    assert swap == {"A": "B", "B": "A"}
    other = _turn("And the other one?", ["B"], refers_to="B")
    assert _follow_numbering(other, ["B"], ["A", "B"], swap) == swap  # no ordinal: unchanged
    # the same numbering as assumed, or a paper the case never listed: nothing swapped
    assert _follow_numbering(first, ["A", "B"], ["A", "B"], {}) == {}
    assert _follow_numbering(first, ["C", "A"], ["A", "B"], {}) == {}
    # only a paper named by its place follows the numbering; "the finch study" is what it describes
    assert _by_place("The third one: how?") and _by_place("And the other paper?")
    assert _by_place("What results did it report?") and _by_place("What did that paper measure?")
    assert not _by_place("What did the finch study compare its method against?")


def test_summary_averages_each_figure_over_the_turns_it_applies_to() -> None:
    scores = [
        TurnScore(case_id="s", kind="single", turn=1, question="q", gold=["A"], retrieved=["X", "A"],
                  cited=["A"], sentences=4, supported=3, seconds=10.0),
        TurnScore(case_id="c", kind="conversation", turn=2, question="q", gold=["B"], refers_to="B",
                  retrieved=["C"], read=["C"], seconds=30.0),
        TurnScore(case_id="n", kind="unanswerable", turn=1, question="q", gold=[], abstained=True,
                  seconds=1.0),
    ]  # fmt: skip
    figures = summary(scores)
    assert figures["recall_at_5"] == 0.5 and figures["mrr"] == 0.25 and figures["gold_cited"] == 0.5
    assert figures["followups_resolved"] == 0.0 and figures["abstention_correct"] == 1.0
    assert figures["supported_sentences"] == 0.75
    assert (figures["seconds_p50"], figures["seconds_max"]) == (10.0, 30.0)


def test_answer_correct_reads_what_the_answer_states_per_kind_of_turn() -> None:
    fact = KeyFact(paper="A", fact="74 test errors", any=["74 test errors", "74 & errors"])
    right = TurnScore(case_id="s", kind="single", turn=1, question="q", gold=["A"], key=[fact])
    beside = right.model_copy(update={"case_id": "t"})
    listing = TurnScore(case_id="c", kind="conversation", turn=1, question="q", gold=["A", "B"],
                        acceptable=["A", "B", "C"], key=[fact], cited=["A", "C", "D"])  # fmt: skip
    follow_up = TurnScore(case_id="c", kind="conversation", turn=2, question="q", gold=["A"],
                          refers_to="A", key=[fact], cited=["A"])  # fmt: skip
    finals = [
        (right, "The distilled net made 74 errors on the test set [[1]](https://arxiv.org/abs/A)."),
        # the right paper cited and every sentence true, but not what was asked
        (beside, "The paper studies knowledge distillation on MNIST [[1]](https://arxiv.org/abs/A)."),
        (listing, "- A: 74 test errors [[1]](https://arxiv.org/abs/A)\n\nSources: [[1]](x) 74 errors"),
        (follow_up, "I could not write an answer the passages I read support; this is what they say: ..."),
    ]
    for score, answer in finals:
        _record_final(score, Final(answer=answer, level="MSc", citations=score.cited or ["A"]))
    assert [s.correct for s, _ in finals] == [True, False, True, False]
    assert [s.turn_kind for s, _ in finals] == ["single", "single", "listing", "follow-up"]
    figures = summary([s for s, _ in finals])
    assert figures["answer_correct"] == 0.5 and figures["answer_correct_single"] == 0.5
    assert figures["answer_correct_listing"] == 1.0 and figures["answer_correct_follow-up"] == 0.0
    assert figures["key_facts_stated"] == 0.5
    assert figures["listed_precision"] == 5 / 6  # A, C of A, C, D; A; A; A
    assert figures["keyed_turns"] == 4


def test_hybrid_search_finds_the_gold_paper_of_every_single_case_in_the_subset(
    ingested: Database, embedder: Embedder
) -> None:
    cases = [c for c in load_cases() if c.kind == "single" and set(c.turns[0].gold_papers) <= IN_SUBSET]
    assert len(cases) >= 12
    ctx = ToolContext(connect=ingested.pooled, embedder=embedder, hybrid=True)
    figures = summary(retrieve_cases(ctx, cases))
    assert figures["recall_at_5"] == 1.0 and figures["mrr"] >= 0.9, figures


@pytest.mark.slow
def test_a_conversation_and_an_unanswerable_question_with_the_local_model(
    corpus_copy: Database, embedder: Embedder, local_model
) -> None:
    """The benchmark's runner on a sub-sample that CI can afford (three answers, about 3 minutes):
    the follow-ups are resolved to the paper meant whatever order the first answer listed them in,
    and a question about a topic absent from the corpus is declined."""
    model, _ = local_model
    conversation = Case(
        id="subset-conversation",
        kind="conversation",
        turns=[
            _turn("Which papers here use the Transformer architecture?",
                  ["1706.03762", "2010.11929"]),
            _turn("How does the second one turn its input into a sequence of tokens?", ["2010.11929"],
                  refers_to="2010.11929"),
            _turn("What results did it report?", ["2010.11929"], refers_to="2010.11929"),
        ],
    )  # fmt: skip
    unanswerable = Case(
        id="subset-none",
        kind="unanswerable",
        turns=[_turn("How does the Raft consensus algorithm elect a leader?", [])],
    )
    service = ChatService(corpus_copy, embedder, model, hybrid=True)
    scores = answer_cases(service, [conversation, unanswerable])
    assert [s.error for s in scores] == [None] * 4
    first, second, third, none = scores
    assert first.recall_at_5 == 1.0 and first.gold_cited and first.gold_cited > 0, first
    assert second.resolved and third.resolved and second.refers_to == third.refers_to, scores
    assert none.abstained and none.abstention_correct and none.seconds < 10
    assert not any(s.abstained for s in (first, second, third))
