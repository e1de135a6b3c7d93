"""The level judgement's training and measurement over the labelled sets (eval/levels)."""

from __future__ import annotations

import numpy as np

from agent.level import LEVELS, LevelModel, weights_path
from corpus.embedder import Embedder
from eval.levels.train import as_judged, fit, labelled_sets


def _data(embedder: Embedder) -> dict[str, tuple[np.ndarray, np.ndarray, list[str]]]:
    out = {}
    for name, items in labelled_sets().items():
        questions = [q["question"] for q in items]
        out[name] = (
            embedder.embed(questions),
            np.array([LEVELS.index(q["level"]) for q in items]),
            questions,
        )
    return out


def test_sets_are_balanced_and_large_enough() -> None:
    sets = labelled_sets()
    questions = [q for items in sets.values() for q in items]
    assert len(questions) >= 150 and len(sets) >= 2
    for level in LEVELS:
        assert sum(q["level"] == level for q in questions) >= 50


def test_judgement_holds_on_a_set_written_by_someone_else(embedder: Embedder) -> None:
    data = _data(embedder)
    (a_x, a_y, _), (b_x, b_y, b_q) = data["questions"], data["questions_b"]
    judged = as_judged(fit(a_x, a_y).predict(b_x), b_q)
    assert (judged == b_y).mean() >= 0.8
    (_, _, a_q) = data["questions"]
    assert (as_judged(fit(b_x, b_y).predict(a_x), a_q) == a_y).mean() >= 0.8


def test_shipped_weights_are_those_the_sets_train(embedder: Embedder) -> None:
    # Training is deterministic: the committed agent/level_weights.json must be retrained
    # (`python -m eval.levels.train`) whenever a labelled set changes.
    data = _data(embedder)
    x = np.vstack([d[0] for d in data.values()])
    y = np.concatenate([d[1] for d in data.values()])
    shipped = LevelModel.load(weights_path())
    assert (fit(x, y).predict(x) == shipped.predict(x)).all()
    assert (shipped.predict(x) == y).mean() >= 0.9
