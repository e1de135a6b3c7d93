"""The level judgement's training and measurement over the labelled sets (eval/levels)."""

from __future__ import annotations

import pytest

from agent.level import LEVELS, LevelModel, weights_path
from eval.levels.train import (
    SHIPPED_VIEWS,
    Vectors,
    cross_topic,
    labelled_sets,
    labels,
    topic_balanced,
    train,
)


@pytest.fixture(scope="module")
def vectors() -> Vectors:
    return Vectors()


def test_sets_are_balanced_and_large_enough() -> None:
    sets = labelled_sets()
    questions = [q for items in sets.values() for q in items]
    assert len(questions) >= 450 and len(sets) >= 3
    for level in LEVELS:
        assert sum(q["level"] == level for q in questions) >= 150
    balanced = topic_balanced()
    by_topic: dict[str, list[str]] = {}
    for q in balanced:
        by_topic.setdefault(q["topic"], []).append(q["level"])
    assert len(by_topic) >= 40 and all(sorted(v) == sorted(LEVELS) for v in by_topic.values())


def test_judgement_holds_on_topics_it_never_saw(vectors: Vectors) -> None:
    """The shipped model's protocol on a fixed split: the topic-balanced set's topics in four
    folds, each judged by a model trained without its topics (README: 0.91)."""
    balanced = topic_balanced()
    labelled = [q for items in labelled_sets().values() for q in items]
    judged = cross_topic(balanced, labelled, vectors, SHIPPED_VIEWS)
    assert (judged == labels(balanced)).mean() >= 0.85


def test_shipped_weights_are_those_the_sets_train(vectors: Vectors) -> None:
    # Training is deterministic: the committed agent/level_weights.json must be retrained
    # (`python -m eval.levels.train`) whenever a labelled set changes.
    everything = [q for items in labelled_sets().values() for q in items] + topic_balanced()
    x, texts = vectors.of(everything), [q["question"] for q in everything]
    shipped = LevelModel.load(weights_path())
    assert shipped.views == SHIPPED_VIEWS
    assert (train(everything, x, SHIPPED_VIEWS).predict(texts, x) == shipped.predict(texts, x)).all()
    assert (shipped.predict(texts, x) == labels(everything)).mean() >= 0.9


def test_topic_masked_wording_keeps_no_topic_word() -> None:
    from agent.level import masked

    request = frozenset({"limitations", "compare"})
    assert masked("What are the limitations of LoRA compared with full fine-tuning?", request) == [
        "what", "are", "the", "limitations", "of", "_", "_", "with", "_", "_", "_",
    ]  # fmt: skip
