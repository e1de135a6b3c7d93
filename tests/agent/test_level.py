"""Readability offline (no nltk download) and the level judgement (statements, then the model)."""

import pytest

from agent.level import decide_level, judge_level
from agent.readability import coleman_liau, flesch_kincaid
from corpus.embedder import Embedder

SIMPLE = "The cat sat on the mat. It was a sunny day. The dog ran to the park."
DENSE = (
    "We characterise the asymptotic convergence of stochastic gradient descent for overparameterised "
    "two-layer networks, deriving generalisation bounds that depend on the spectral properties of the "
    "neural tangent kernel and on the sample complexity of the teacher-student setting."
)


def test_grades_are_computed_offline_and_ordered() -> None:
    assert flesch_kincaid(SIMPLE) < 3
    assert flesch_kincaid(DENSE) > 18
    assert coleman_liau(SIMPLE) < coleman_liau(DENSE)
    # a known value: textstat's FK for this sentence with the CMU dictionary
    assert flesch_kincaid("The quick brown fox jumps over the lazy dog.") == pytest.approx(2.3, abs=0.05)


# Written for this test, in none of the labelled sets the judgement was trained on.
UNSEEN = [
    # long, formal and full of jargon, yet asking for the basics
    (
        "In the context of contemporary deep learning architectures, could you please explain what "
        "the attention mechanism fundamentally is and why practitioners consider it useful?",
        "BSc",
    ),
    ("what is a neural network? how does it learn?", "BSc"),
    ("How does LoRA's low-rank update compare with full fine-tuning in memory and accuracy?", "MSc"),
    ("which optimizer should I pick for training a small transformer, Adam or SGD with momentum?", "MSc"),
    # short and casual, yet asking for critical analysis
    ("does the ZeRO speedup even hold on slow interconnects?", "PhD"),
    ("is the evidence that chain-of-thought helps small models actually convincing?", "PhD"),
]


def test_level_is_what_is_asked_not_how_it_is_written(embedder: Embedder) -> None:
    judged = [judge_level(question, embedder)[0] for question, _ in UNSEEN]
    right = sum(j == level for j, (_, level) in zip(judged, UNSEEN, strict=True))
    assert right >= 5, judged  # a statistical judgement: 5 of these 6 at least


def test_a_stated_level_wins_and_a_level_stays(embedder: Embedder) -> None:
    assert judge_level("I'm a master's student; how do transformers use attention?", embedder) == (
        "MSc",
        "the user said so",
    )
    assert judge_level("explain like I'm five: what is gradient descent", embedder)[0] == "BSc"
    assert (
        judge_level("What limits do PhD programmes put on thesis length?", embedder)[1] != "the user said so"
    )
    level, reason, changed = decide_level("what is a cat?", "PhD", embedder)
    assert (level, changed) == ("PhD", False) and "kept" in reason
    assert decide_level("actually I'm an undergrad", "PhD", embedder)[:1] == ("BSc",)
