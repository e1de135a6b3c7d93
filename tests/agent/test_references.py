"""Which earlier paper a follow-up means, and which papers are in play after a follow-up."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent.references import ChatPaper, position, resolve
from agent.session import in_play
from corpus.chats import MessageRecord
from corpus.embedder import Embedder

JACKDAWS = [
    ChatPaper(n=1, paper_id="1612.05489", title="Recognising jackdaw calls from backpack recordings",
              about="Microphone backpacks on free-flying jackdaws record their calls in the field."),
    ChatPaper(n=2, paper_id="1603.07236", title="Individual identity in songbirds: signal representations",
              about="Calls of 20 individually recorded jackdaws, metric learning for individual identity."),
    ChatPaper(n=3, paper_id="1411.3715", title="Automatic large-scale classification of bird sounds",
              about="Unsupervised feature learning for classifying thousands of bird species recordings."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "where"),
    [("How was the second one trained?", 1), ("What did [3] measure?", 2), ("And the last paper?", -1),
     ("What about paper 2?", 1), ("How does it work?", None)],
)  # fmt: skip
def test_position_names_the_place_in_the_list(question: str, where: int | None) -> None:
    assert position(question) == where


def test_the_other_paper_among_several_is_the_first_listed_one(embedder: Embedder) -> None:
    # the previous turn read the backpack paper [1]; two others were listed: the other is [2]
    meant = resolve("And the other paper, how were its recordings captured?", JACKDAWS,
                    ["1612.05489"], embedder)  # fmt: skip
    assert meant is not None and meant.papers == ["1603.07236"] and meant.how == "the other paper"


def _answer(citations: list[str]) -> MessageRecord:
    return MessageRecord(message_id=0, role="assistant", content="", level=None, steps=[],
                         citations=citations, passages={}, tokens_in=None, tokens_out=None,
                         created_at=datetime.now(UTC))  # fmt: skip


def test_papers_in_play_stay_the_listing_while_follow_ups_discuss_one_of_them() -> None:
    listing = _answer(["A", "B", "C"])
    assert in_play([]) == []
    assert in_play([listing]) == ["A", "B", "C"]
    assert in_play([listing, _answer(["C"])]) == ["A", "B", "C"]  # "the third one: ...?"
    assert in_play([listing, _answer(["D"])]) == ["D"]  # a new topic
    assert in_play([listing, _answer(["C"]), _answer(["D", "E"])]) == ["D", "E"]
