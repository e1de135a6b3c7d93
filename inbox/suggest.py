"""Papers worth rating next (active learning for the first visit): with a model, the ones it is
least sure of; before one, neighbours of each followed topic in turn, and a few far from all of
them, so the first ratings hold 👎 as well as 👍. Near-duplicates of a chosen paper are skipped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import psycopg

from corpus import interests
from inbox import ranker
from inbox.listing import InboxPaper, Why, anchors_of, card, why_of

PER_ANCHOR = 25  # neighbours fetched per topic / liked paper
NEAR_DUPLICATE = 0.9  # cosine above which two suggestions say the same
FAR_SHARE = 0.2  # of the suggestions, before a model exists: far from every topic


def _diverse(order: list[int], vectors: np.ndarray, n: int) -> list[int]:
    chosen: list[int] = []
    for i in order:
        if all(float(vectors[i] @ vectors[j]) < NEAR_DUPLICATE for j in chosen):
            chosen.append(i)
        if len(chosen) == n:
            break
    return chosen


def suggestions(conn: psycopg.Connection, owner: str, n: int = 10) -> list[InboxPaper]:
    prof = interests.profile(conn, owner)
    ratings = interests.ratings(conn, owner)
    anchors = anchors_of(conn, owner, prof.implicit, ratings)
    rated = [r.paper_id for r in ratings]
    pool: dict[str, interests.Candidate] = {}
    per_anchor: list[list[str]] = []
    # every topic (up to 20), then the latest liked and cited papers (anchors_of lists them newest first)
    topic_rows = [i for i, k in enumerate(anchors.kinds) if k == "topic"][:20]
    liked_rows = [i for i, k in enumerate(anchors.kinds) if k == "liked"][:10]
    cited_rows = [i for i, k in enumerate(anchors.kinds) if k == "cited"][:5]
    for vector in anchors.vectors[topic_rows + liked_rows + cited_rows]:
        near = interests.nearest(conn, vector, PER_ANCHOR, exclude=rated)
        per_anchor.append([c.paper_id for c in near])
        pool.update({c.paper_id: c for c in near})
    if not pool:
        return []
    # papers of the last weeks, for the far ones (what the user is not after)
    recent_ids, _ = interests.arrived(conn, datetime.now(UTC) - timedelta(days=30), limit=200)
    recent = interests.candidates(conn, [pid for pid in recent_ids if pid not in pool and pid not in rated])
    pool.update({c.paper_id: c for c in recent})
    ids = list(pool)
    vectors = np.vstack([pool[i].vector for i in ids])
    if prof.weights is not None:
        # the model's least certain papers first (logit nearest 0)
        score = ranker.scores(np.asarray(prof.weights, dtype=np.float32), vectors)
        order = list(np.argsort(np.abs(score), kind="stable"))
        why_prefix = "the model is unsure about this one"
    else:
        score = None
        position = {pid: k for k, pid in enumerate(ids)}
        # round robin over anchors: each topic's nearest, then each one's second nearest, ...
        order = []
        for rank in range(PER_ANCHOR):
            for group in per_anchor:
                if rank < len(group) and position[group[rank]] not in order:
                    order.append(position[group[rank]])
        far = round(n * FAR_SHARE)
        closest = anchors.vectors @ vectors.T if len(anchors.vectors) else np.zeros((1, len(ids)))
        far_order = list(np.argsort(closest.max(axis=0), kind="stable"))[:far]
        order = [i for i in order if i not in far_order][: n - far] + far_order
        why_prefix = "to learn what you like"
    chosen = _diverse([int(i) for i in order], vectors, n)
    best, sims = ranker.nearest_anchor(anchors.vectors, vectors[chosen])
    out = []
    for k, i in enumerate(chosen):
        base = why_of(anchors, int(best[k]), float(sims[k])) if best[k] >= 0 else None
        text = f"{why_prefix}: {base.text}" if base else why_prefix
        why = Why(kind=base.kind if base else "newest", text=text, ref=base.ref if base else None)
        out.append(card(pool[ids[i]], None if score is None else float(score[i]), why))
    return out
