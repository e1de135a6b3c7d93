"""The level judgement's training and measurement over the labelled sets (eval/levels)."""

from __future__ import annotations

import pytest

from agent.level import LEVELS, LevelModel, weights_path
from eval.levels.train import (
    NOT_TRAINED_ON,
    SHIPPED_LAYERS,
    SHIPPED_VIEWS,
    Vectors,
    cross_topic,
    default_questions,
    labelled_sets,
    labels,
    topic_balanced,
    train,
    training_items,
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
    folds, each judged by a model trained without its topics (README: 0.96)."""
    balanced = topic_balanced()
    judged = cross_topic(balanced, training_items(labelled_sets()), vectors, SHIPPED_VIEWS)
    assert (judged == labels(balanced)).mean() >= 0.85


def test_shipped_weights_judge_sets_they_were_not_trained_on(vectors: Vectors) -> None:
    """Set A (each topic at one level) and `chatpapers eval`'s questions are never trained on
    (README: 0.91 and 0.87)."""
    shipped = LevelModel.load(weights_path())
    sets = labelled_sets()
    for items in [*(sets[name] for name in NOT_TRAINED_ON), default_questions()]:
        texts = [q["question"] for q in items]
        assert (shipped.predict(texts, vectors.of(items)) == labels(items)).mean() >= 0.85


def test_shipped_weights_are_those_the_sets_train(vectors: Vectors) -> None:
    # Training is deterministic: the committed agent/level_weights.json must be retrained
    # (`python -m eval.levels.train`) whenever a labelled set changes.
    everything = training_items(labelled_sets()) + topic_balanced()
    x, texts = vectors.of(everything), [q["question"] for q in everything]
    shipped = LevelModel.load(weights_path())
    assert (shipped.views, shipped.layers) == (SHIPPED_VIEWS, SHIPPED_LAYERS)
    retrained = train(everything, x, SHIPPED_VIEWS, SHIPPED_LAYERS)
    assert (retrained.predict(texts, x) == shipped.predict(texts, x)).all()
    assert (shipped.predict(texts, x) == labels(everything)).mean() >= 0.9


def test_topic_masked_wording_keeps_no_topic_word() -> None:
    from agent.level import masked

    request = frozenset({"limitations", "compare"})
    assert masked("What are the limitations of LoRA compared with full fine-tuning?", request) == [
        "what", "are", "the", "limitations", "of", "_", "_", "with", "_", "_", "_",
    ]  # fmt: skip
