"""A user's model, learned from what the store holds of them: 👍 / 👎, the papers their chats cited
(unless switched off), followed topics for the cold start, and random corpus papers as negatives."""

from __future__ import annotations

import hashlib
import threading
import time

import numpy as np
import psycopg
from pydantic import BaseModel

from corpus import interests
from inbox import ranker

RANDOM_REFRESH_SECONDS = 3600.0  # the random negatives are drawn again after this long


class Trained(BaseModel):
    owner: str
    trained: bool  # False: no 👍 and no cited paper yet (topics alone rank by the nearest topic)
    counts: dict[str, int]
    seconds: float


class RandomPapers:
    """One draw of random corpus papers shared by every user's training, drawn again hourly: a
    retrain after a 👍 then takes milliseconds instead of a pass over the papers table."""

    def __init__(self, n: int = ranker.RANDOM_NEGATIVES) -> None:
        self.n = n
        self._vectors: np.ndarray | None = None
        self._drawn_at = 0.0
        self._lock = threading.Lock()
        self._drawing = False

    def get(self, conn: psycopg.Connection) -> np.ndarray:
        with self._lock:
            current = self._vectors
            fresh = time.monotonic() - self._drawn_at <= RANDOM_REFRESH_SECONDS
            if current is not None and len(current) >= self.n // 2 and fresh:
                return current
            if current is not None and self._drawing:
                return current  # another thread is drawing: the old draw serves meanwhile
            self._drawing = True
        try:  # outside the lock: other users' retrains do not queue behind a draw
            drawn = interests.sample_vectors(conn, self.n, seed=_seed())
        finally:
            with self._lock:
                self._drawing = False
        with self._lock:
            self._vectors, self._drawn_at = drawn, time.monotonic()
        return drawn


def _seed() -> int:
    # a new draw each day, the same draw all day (and in every process)
    return int(hashlib.sha256(time.strftime("%Y-%m-%d").encode()).hexdigest()[:6], 16)


def retrain(conn: psycopg.Connection, owner: str, random_papers: RandomPapers) -> Trained:
    """Learns `owner`'s weights from the store and saves them (None when there is nothing yet)."""
    started = time.perf_counter()
    negatives = random_papers.get(conn)  # before the lock: a draw may take a moment
    interests.lock_owner(conn, owner)
    prof = interests.profile(conn, owner)
    _, ratings, vectors = interests.rated_vectors(conn, owner)
    liked, disliked = vectors[ratings == 1], vectors[ratings == -1]
    cited = interests.cited_vectors(conn, owner)[1] if prof.implicit else None
    topics = interests.topics(conn, owner)
    topic_vectors = np.vstack([v for _, v in topics]) if topics else None
    data = ranker.examples(liked, disliked, negatives, implicit=cited, topics=topic_vectors)
    # Followed topics alone rank by the nearest topic (a linear model would favour papers between
    # two unrelated topics); the model starts with the first 👍 or cited paper.
    learned_from_papers = len(liked) > 0 or (cited is not None and len(cited) > 0)
    weights = ranker.fit(data) if learned_from_papers else None
    counts = {
        "liked": len(liked),
        "disliked": len(disliked),
        "cited": 0 if cited is None else len(cited),
        "topics": len(topics),
        "topics_used": 0 if len(liked) >= ranker.TOPIC_COLD_START else len(topics),
    }
    interests.save_weights(conn, owner, weights, counts)
    return Trained(
        owner=owner, trained=weights is not None, counts=counts, seconds=time.perf_counter() - started
    )
