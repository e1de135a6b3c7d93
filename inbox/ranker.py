"""The personal ranker: a class-balanced logistic regression over title+abstract vectors, as
Scholar Inbox ranks (arXiv 2504.08385). Pure arrays in, arrays out: what to learn from is
gathered by `inbox.profile`, so benchmarks train exactly the model the product uses."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

DIM = 384
C = 1.0  # inverse L2 strength; unit vectors, a few dozen ratings: bench/inbox.py measured the range
TOPIC_COLD_START = 5  # followed topics count as 👍 until the user has rated this many papers 👍
IMPLICIT_WEIGHT = 0.3  # a paper a chat cited says less than a 👍
RANDOM_NEGATIVES = 1000  # corpus papers drawn as "not everything is interesting"


class Examples(BaseModel):
    """What one user's model is learned from: vectors with their labels (1 / 0) and weights."""

    model_config = {"arbitrary_types_allowed": True}

    vectors: np.ndarray
    labels: np.ndarray
    weights: np.ndarray

    def counts(self) -> tuple[int, int]:
        return int((self.labels == 1).sum()), int((self.labels == 0).sum())


def examples(
    liked: np.ndarray,
    disliked: np.ndarray,
    random_papers: np.ndarray,
    implicit: np.ndarray | None = None,
    topics: np.ndarray | None = None,
) -> Examples:
    """Positives: 👍 (weight 1), cited papers (IMPLICIT_WEIGHT), topics while the user has rated
    fewer than TOPIC_COLD_START papers 👍. Negatives: 👎 (weight 1) and random corpus papers, which
    share the negatives' weight with the 👎 so a handful of 👎 is not drowned by a thousand."""
    empty = np.zeros((0, DIM), dtype=np.float32)
    implicit = empty if implicit is None else implicit
    topics = empty if topics is None or len(liked) >= TOPIC_COLD_START else topics
    pos = [liked, implicit, topics]
    pos_w = [np.ones(len(liked)), np.full(len(implicit), IMPLICIT_WEIGHT), np.ones(len(topics))]
    rand_w = np.full(
        len(random_papers), 1.0 if len(disliked) == 0 else max(len(disliked), 1) / max(len(random_papers), 1)
    )
    vectors = np.vstack([*pos, disliked, random_papers]).astype(np.float32)
    labels = np.concatenate([np.ones(sum(len(p) for p in pos)), np.zeros(len(disliked) + len(random_papers))])
    weights = np.concatenate([*pos_w, np.ones(len(disliked)), rand_w])
    return Examples(vectors=vectors, labels=labels, weights=weights)


def fit(data: Examples, c: float = C) -> np.ndarray | None:
    """The weights (DIM values, then the bias), or None when there is no positive or no negative.
    Classes are balanced by weight: the model learns from a user's dozen 👍 against a thousand others."""
    n_pos, n_neg = data.counts()
    if n_pos == 0 or n_neg == 0:
        return None
    w = data.weights.astype(np.float64).copy()
    pos = data.labels == 1
    w[pos] *= 0.5 / w[pos].sum()
    w[~pos] *= 0.5 / w[~pos].sum()
    w *= len(w)  # mean weight 1: C keeps its usual meaning
    # imported here: scikit-learn takes 2 s to import, and every `chatpapers` command (even
    # --version) imports this module through the inbox's commands
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=200)
    model.fit(data.vectors, data.labels, sample_weight=w)
    return np.concatenate([model.coef_[0], model.intercept_]).astype(np.float32)


def scores(weights: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Scores of every paper for every user in one matrix product: `weights` is (users, DIM+1) or
    one user's (DIM+1,); `vectors` (papers, DIM). Higher is more interesting (a logit)."""
    w = np.atleast_2d(weights).astype(np.float32)
    out = vectors.astype(np.float32) @ w[:, :DIM].T + w[:, DIM]
    return out.T if weights.ndim == 2 else out[:, 0]


def topic_scores(topics: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Before anything is rated: how close each paper is to the nearest followed topic (cosine)."""
    return (vectors.astype(np.float32) @ topics.astype(np.float32).T).max(axis=1)


def nearest_anchor(anchors: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each paper, which anchor (a topic or a liked paper) is nearest and how near (cosine):
    the "why" shown beside a recommendation."""
    if len(anchors) == 0:
        return np.full(len(vectors), -1), np.zeros(len(vectors))
    sims = vectors.astype(np.float32) @ anchors.astype(np.float32).T
    best = sims.argmax(axis=1)
    return best, sims[np.arange(len(vectors)), best]
