"""The interview's own rules over the real database and embedder (the model is scripted): a
journalist who repeats an earlier question is replaced by the round's angle, and the author's
answer is checked against its passages like a chat answer."""

from __future__ import annotations

from agent.interview import ANGLES, AnswerGiven, Exchange, PaperInterview, Passage, QuestionAsked
from agent.tools import ToolContext
from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from tests.scripted_model import ScriptedModel

RESNET = "1512.03385"
ABSTRACT = (
    "We present a residual learning framework to ease the training of networks that are substantially "
    "deeper than those used previously."
)


def _interview(db: Database, embedder: Embedder, replies: list[str]) -> PaperInterview:
    tools = ToolContext(connect=db.pooled, embedder=embedder, llm=ScriptedModel(replies))
    return PaperInterview(tools, RESNET, "BSc")


def test_a_repeated_question_gives_way_to_the_rounds_angle(ingested: Database, embedder: Embedder) -> None:
    earlier = [Exchange(asker="journalist", question="Why were deeper plain networks harder to train?")]
    interview = _interview(
        ingested, embedder, ["Why were deeper plain networks harder to train?", "An answer."]
    )
    events = list(interview.round(earlier))
    asked = next(e for e in events if isinstance(e, QuestionAsked))
    assert asked.text == f"Could you explain {ANGLES[1]}?"
    fresh = _interview(
        ingested, embedder, ["Q: How were the ImageNet results measured?\n(more)", "An answer."]
    )
    assert next(e for e in fresh.round(earlier) if isinstance(e, QuestionAsked)).text == (
        "How were the ImageNet results measured?"
    )


def test_the_authors_answer_is_checked_against_its_passages(ingested: Database, embedder: Embedder) -> None:
    with ingested.connect() as conn:
        opening = next(text for _, seq, text in papers.chunk_texts(conn, RESNET) if seq == 0)
    assert ABSTRACT in " ".join(opening.split())
    interview = _interview(ingested, embedder, [])
    invented = "The framework was first tested on punch cards in Lisbon in 1952 with 42 layers."
    exchange = Exchange(
        asker="you",
        question="What do the authors present?",
        answer=f"{ABSTRACT} {invented}",
        passages=[
            Passage(n=1, chunk_id=f"{RESNET}#0", page=1, text=opening),
            Passage(n=2, chunk_id=f"{RESNET}#9", page=3, text="Unrelated text about tables and figures."),
        ],
    )
    interview._check(exchange)
    assert exchange.unsupported == [invented]
    # it cited nothing: the passage that supports it is cited, the other one is not
    assert exchange.answer.endswith(f"{invented} [1]")


def test_a_round_ends_with_the_whole_exchange(ingested: Database, embedder: Embedder) -> None:
    interview = _interview(ingested, embedder, [f"{ABSTRACT} [1]"])
    events = list(interview.round([], question="What do the authors present?"))
    final = events[-1]
    assert isinstance(final, AnswerGiven) and final.exchange.asker == "you"
    assert final.exchange.answer == f"{ABSTRACT} [1]" and final.exchange.unsupported == []
    assert all(p.chunk_id.startswith(RESNET + "#") for p in final.exchange.passages)
