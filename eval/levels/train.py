"""Train and measure the level judgement: multinomial logistic regression on the MiniLM vector of
the question, over the level-labelled sets in eval/levels/*.yaml.

    python -m eval.levels.train            # measure (cross-validation, set A <-> set B), then write
    python -m eval.levels.train --check    # measure only

Prints accuracy and confusion matrices: 5-fold cross-validation over all sets, and across sets
written by different people (train on one, test on the other), the fairer estimate of how it does
on questions nobody tuned for. Writes agent/level_weights.json (trained on every set)."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from agent.level import LEVELS, LevelModel, weights_path, why_explicit
from corpus.embedder import Embedder

L2 = 1.0  # ridge penalty: the sets are small, the vectors 384-d


def labelled_sets(folder: Path | None = None) -> dict[str, list[dict]]:
    folder = folder or Path(str(resources.files("eval.levels")))
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))}


def fit(vectors: np.ndarray, labels: np.ndarray, l2: float = L2, steps: int = 800) -> LevelModel:
    """Softmax regression by gradient descent (numpy only: 384 x 3 weights, a few hundred rows)."""
    weights = np.zeros((vectors.shape[1], len(LEVELS)))
    bias = np.zeros(len(LEVELS))
    onehot = np.eye(len(LEVELS))[labels]
    x = vectors * LevelModel.SCALE
    for _ in range(steps):
        probs = LevelModel.softmax(x @ weights + bias)
        grad = probs - onehot
        weights -= 0.5 * (x.T @ grad + l2 * weights) / len(x)
        bias -= 0.5 * grad.mean(axis=0)
    return LevelModel(weights=weights, bias=bias)


def confusion(truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    matrix = np.zeros((len(LEVELS), len(LEVELS)), dtype=int)
    for t, p in zip(truth, predicted, strict=True):
        matrix[t, p] += 1
    return matrix


def show(title: str, truth: np.ndarray, predicted: np.ndarray) -> float:
    accuracy = float((truth == predicted).mean())
    print(f"\n{title}: accuracy {accuracy:.2f} (n={len(truth)})")
    print("| asked at \\ judged | " + " | ".join(LEVELS) + " |")
    print("|---|" + "---|" * len(LEVELS))
    for level, row in zip(LEVELS, confusion(truth, predicted), strict=True):
        print(f"| {level} | " + " | ".join(str(v) for v in row) + " |")
    return accuracy


def as_judged(predicted: np.ndarray, questions: list[str]) -> np.ndarray:
    """What the product decides: a level the asker states wins over the model."""
    stated = [why_explicit(q) for q in questions]
    return np.array([LEVELS.index(s) if s else int(p) for p, s in zip(predicted, stated, strict=True)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="measure only; do not write the weights")
    args = parser.parse_args()
    sets = labelled_sets()
    embedder = Embedder()
    data = {}
    for name, items in sets.items():
        vectors = embedder.embed([q["question"] for q in items])
        labels = np.array([LEVELS.index(q["level"]) for q in items])
        data[name] = (vectors, labels, [q["question"] for q in items])
        print(f"{name}: {len(items)} questions")

    all_x = np.vstack([d[0] for d in data.values()])
    all_y = np.concatenate([d[1] for d in data.values()])
    order = np.random.default_rng(0).permutation(len(all_y))
    predicted = np.zeros_like(all_y)
    for fold in np.array_split(order, 5):
        train = np.setdiff1d(order, fold)
        predicted[fold] = fit(all_x[train], all_y[train]).predict(all_x[fold])
    show("5-fold cross-validation, all sets", all_y, predicted)

    names = list(data)
    for test in names:
        rest = [n for n in names if n != test]
        if not rest:
            continue
        model = fit(np.vstack([data[n][0] for n in rest]), np.concatenate([data[n][1] for n in rest]))
        show(f"trained on {', '.join(rest)}, tested on {test}", data[test][1], model.predict(data[test][0]))
        judged = as_judged(model.predict(data[test][0]), data[test][2])
        show("  the same, with stated levels first (as chatpapers judges)", data[test][1], judged)

    explicit = sum(why_explicit(q) is not None for d in data.values() for q in d[2])
    print(f"\n{explicit} questions state the asker's level (those are decided by the statement)")
    if not args.check:
        model = fit(all_x, all_y)
        model.save(weights_path())
        print(f"written {weights_path()} (trained on {len(all_y)} questions)")


if __name__ == "__main__":
    main()
