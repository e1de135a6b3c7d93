"""The end of a nightly ingest: every user's model is learned again (the day's chats added cited
papers; yesterday's 👍 are in) and the night's new papers are scored for every user at once, one
matrix product, to report what each inbox got."""

from __future__ import annotations

import time
from datetime import datetime

import numpy as np
import psycopg
from pydantic import BaseModel

from corpus import interests
from inbox import ranker
from inbox.profile import RandomPapers, retrain


class Refreshed(BaseModel):
    users: int
    trained: int  # users with a model (the others rank by topics, or newest first)
    new_papers: int
    train_seconds: float
    score_seconds: float
    best: dict[str, str]  # owner -> the new paper ranked first for them


def refresh_all(
    conn: psycopg.Connection, since: datetime, random_papers: RandomPapers | None = None
) -> Refreshed:
    """Commits after each user (`conn` must not be inside a transaction block): a user's own 👍 or
    visit waits for that user's retrain only, not for everyone's."""
    random_papers = random_papers or RandomPapers()
    started = time.perf_counter()
    owners = interests.owners_with_interests(conn)
    conn.commit()
    results = []
    for owner in owners:
        results.append(retrain(conn, owner, random_papers))
        conn.commit()
    trained_at = time.perf_counter()
    ids, vectors = interests.arrived(conn, since)
    profiles = [p for p in interests.profiles(conn) if p.weights is not None]
    conn.commit()
    best: dict[str, str] = {}
    if ids and profiles:
        weights = np.asarray([p.weights for p in profiles], dtype=np.float32)
        top = ranker.scores(weights, vectors).argmax(axis=1)
        best = {p.owner: ids[int(i)] for p, i in zip(profiles, top, strict=True)}
    return Refreshed(
        users=len(owners),
        trained=sum(r.trained for r in results),
        new_papers=len(ids),
        train_seconds=round(trained_at - started, 3),
        score_seconds=round(time.perf_counter() - trained_at, 3),
        best=best,
    )
