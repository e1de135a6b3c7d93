"""A user's inbox: the papers that arrived in a window, ranked by their model (or by the nearest
followed topic before anything is rated, or newest first with no interests at all), each with the
reason it is there."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Literal

import numpy as np
import psycopg
from pydantic import BaseModel

from corpus import interests
from corpus.ids import abs_url
from inbox import ranker

ABSTRACT_HEAD_CHARS = 320
DEFAULT_DAYS = 7  # the first visit's window, and the window when the last visit is older than a month
MAX_CANDIDATES = 20000  # papers looked at in one window (a month of arXiv cs is ~ 15k)


class Why(BaseModel):
    kind: Literal["topic", "liked", "cited", "rated", "newest"]  # rated: the paper itself
    text: str  # shown as is: "near your topic “graph neural networks”"
    ref: str | None = None  # the topic, or the paper id it is like
    similarity: float | None = None


class InboxPaper(BaseModel):
    paper_id: str
    url: str
    title: str
    authors: list[str]
    published: datetime | None
    arrived: datetime
    categories: list[str]
    abstract_head: str
    score: float | None
    why: Why
    rating: int = 0


class InboxPage(BaseModel):
    since: datetime
    until: datetime | None
    ranked_by: Literal["model", "topics", "newest"]
    total: int
    papers: list[InboxPaper]


def default_since(previous_visit: datetime | None, now: datetime) -> datetime:
    """Where "new" starts: the visit before this one, or a week ago."""
    if previous_visit is not None and previous_visit > now - timedelta(days=30):
        return previous_visit
    return now - timedelta(days=DEFAULT_DAYS)


def abstract_head(abstract: str | None, chars: int = ABSTRACT_HEAD_CHARS) -> str:
    """The abstract's first sentences, whole, within `chars` (or cut at a word with an ellipsis)."""
    text = " ".join((abstract or "").split())
    if len(text) <= chars:
        return text
    sentences = re.split(r"(?<=[.!?])\s+", text)
    head = ""
    for s in sentences:
        if len(head) + len(s) + 1 > chars:
            break
        head = f"{head} {s}".strip()
    return head or text[:chars].rsplit(" ", 1)[0] + "…"


class Anchors(BaseModel):
    """What a "why" can point at: followed topics and liked / cited papers, with their vectors."""

    model_config = {"arbitrary_types_allowed": True}
    kinds: list[str]
    labels: list[str]
    refs: list[str]
    vectors: np.ndarray


def anchors_of(
    conn: psycopg.Connection, owner: str, implicit: bool, rated: list[interests.Rating]
) -> Anchors:
    """Topics, then liked papers and cited ones, newest first; `rated` is the owner's ratings
    (`interests.ratings`), which the caller reads once for other uses too."""
    kinds, labels, refs, vecs = [], [], [], []
    for topic, vector in interests.topics(conn, owner):
        kinds.append("topic"), labels.append(topic), refs.append(topic), vecs.append(vector)
    liked = [r.paper_id for r in rated if r.rating == 1]
    cited = interests.cited_vectors(conn, owner, limit=100)[0] if implicit else []
    titles = {c.paper_id: c for c in interests.candidates(conn, liked + cited)}
    for kind, group in (("liked", liked), ("cited", cited)):
        for pid in group:
            if pid in titles:
                kinds.append(kind), labels.append(titles[pid].title), refs.append(pid)
                vecs.append(titles[pid].vector)
    matrix = np.vstack(vecs) if vecs else np.zeros((0, ranker.DIM), dtype=np.float32)
    return Anchors(kinds=kinds, labels=labels, refs=refs, vectors=matrix)


def why_of(anchors: Anchors, index: int, similarity: float) -> Why:
    kind, label, ref = anchors.kinds[index], anchors.labels[index], anchors.refs[index]
    text = {
        "topic": f"near your topic “{label}”",
        "liked": f"like “{label}”, which you rated up",
        "cited": f"like “{label}”, cited in your chats",
    }[kind]
    return Why(kind=kind, text=text, ref=ref, similarity=round(float(similarity), 3))  # type: ignore[arg-type]


def card(c: interests.Candidate, score: float | None, why: Why, rating: int = 0) -> InboxPaper:
    return InboxPaper(
        paper_id=c.paper_id,
        url=abs_url(c.paper_id),
        title=c.title,
        authors=c.authors,
        published=c.published,
        arrived=c.arrived,
        categories=c.categories,
        abstract_head=abstract_head(c.abstract),
        score=None if score is None else round(score, 4),
        why=why,
        rating=rating,
    )


def ranked(
    conn: psycopg.Connection,
    owner: str,
    since: datetime,
    until: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> InboxPage:
    """The papers that first arrived in [since, until), best first; `total` counts at most
    MAX_CANDIDATES (the newest)."""
    prof = interests.profile(conn, owner)
    ids, vectors = interests.arrived(conn, since, until, limit=MAX_CANDIDATES)
    rated = interests.ratings(conn, owner)
    ratings = {r.paper_id: r.rating for r in rated}
    anchors = anchors_of(conn, owner, prof.implicit, rated)
    topic_rows = [i for i, k in enumerate(anchors.kinds) if k == "topic"]
    score: np.ndarray | None
    if prof.weights is not None and ids:
        ranked_by, score = "model", ranker.scores(np.asarray(prof.weights, dtype=np.float32), vectors)
    elif topic_rows and ids:
        ranked_by, score = "topics", ranker.topic_scores(anchors.vectors[topic_rows], vectors)
        # before the model exists, a 👎 still sends its paper to the end
        score = score - 10.0 * np.array([ratings.get(pid) == -1 for pid in ids], dtype=np.float32)
    else:
        ranked_by, score = "newest", None
    # newest first already; a stable sort keeps that order among equal scores
    order = np.argsort(-score, kind="stable") if score is not None else np.arange(len(ids))
    chosen = [int(i) for i in order[offset : offset + limit]]
    cards = {c.paper_id: c for c in interests.candidates(conn, [ids[i] for i in chosen])}
    best, sims = ranker.nearest_anchor(anchors.vectors, vectors[chosen]) if chosen else ([], [])
    papers = []
    for n, i in enumerate(chosen):
        c = cards.get(ids[i])
        if c is None:  # deleted between the two reads
            continue
        rating = ratings.get(c.paper_id, 0)
        if rating or (best[n] >= 0 and anchors.refs[int(best[n])] == c.paper_id):
            # the paper is one of the user's own anchors: "like itself" says nothing
            # words, not 👍 / 👎: pages and feed readers without an emoji font showed empty boxes
            text = {1: "you rated it up", -1: "you rated it down"}.get(rating, "cited in your chats")
            why = Why(
                kind="liked" if rating == 1 else "cited" if rating == 0 else "newest",
                text=text,
                ref=c.paper_id,
            )
        elif ranked_by != "newest" and best[n] >= 0:
            why = why_of(anchors, int(best[n]), float(sims[n]))
        else:
            why = Why(kind="newest", text="new; follow topics or rate papers to rank your inbox")
        papers.append(card(c, None if score is None else float(score[i]), why, rating))
    return InboxPage(since=since, until=until, ranked_by=ranked_by, total=len(ids), papers=papers)  # type: ignore[arg-type]
