"""Readability offline (no nltk download) and level judgement."""

import pytest

from agent.level import decide_level, judge_level
from agent.readability import coleman_liau, flesch_kincaid

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


def test_level_from_writing_and_from_statements() -> None:
    assert judge_level("what is a neural network? how does it learn?")[0] == "BSc"
    assert judge_level(DENSE)[0] == "PhD"
    assert judge_level("I'm a master's student; how do transformers use attention?")[0] == "MSc"
    assert judge_level("explain like I'm new to this: what is gradient descent")[0] == "BSc"
    level, reason, changed = decide_level("what is a cat?", "PhD")
    assert (level, changed) == ("PhD", False) and "kept" in reason
    assert decide_level("actually I'm an undergrad", "PhD")[:1] == ("BSc",)
