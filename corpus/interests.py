"""SQL for a user's interests (followed topics, paper ratings, the trained profile and the feed
token) and for the papers the inbox ranks. Every statement is scoped by `owner`: no function here
reads or changes another user's rows."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import psycopg
from psycopg.types.json import Jsonb
from pydantic import BaseModel

from corpus.embedder import to_pgvector_text

RATING_SOURCES = ("inbox", "card", "terminal", "library", "start")


class Rating(BaseModel):
    paper_id: str
    rating: int
    source: str
    rated_at: datetime


class Profile(BaseModel):
    owner: str
    weights: list[float] | None = None
    trained_on: dict[str, int] = {}
    trained_at: datetime | None = None
    implicit: bool = True
    visited_at: datetime | None = None
    previous_visit: datetime | None = None
    has_feed: bool = False


class Candidate(BaseModel):
    """A paper the inbox may list: what a card shows, and its title+abstract vector."""

    model_config = {"arbitrary_types_allowed": True}

    paper_id: str
    title: str
    authors: list[str]
    abstract: str | None
    categories: list[str]
    published: datetime | None
    arrived: datetime  # when it first arrived (first_ingested_at)
    vector: np.ndarray


# Queries that return vectors ask for binary results: parsing a vector's text form costs ~0.5 ms
# (a day of 1,000 papers: half a second), its bytes ~2 µs.
def _vectors(values: list) -> np.ndarray:
    if not values:
        return np.zeros((0, 384), dtype=np.float32)
    return np.vstack(
        [np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32) for v in values]
    )


# ---- topics -------------------------------------------------------------------------------------


def topics(conn: psycopg.Connection, owner: str) -> list[tuple[str, np.ndarray]]:
    rows = conn.execute(
        "SELECT topic, embedding FROM interest_topics WHERE owner = %s ORDER BY created_at, topic",
        (owner,),
        binary=True,
    ).fetchall()
    return [(r[0], _vectors([r[1]])[0]) for r in rows]


def replace_topics(conn: psycopg.Connection, owner: str, entries: list[tuple[str, np.ndarray]]) -> None:
    """The followed topics become exactly `entries` (kept ones keep their date)."""
    with conn.transaction():
        conn.execute(
            "DELETE FROM interest_topics WHERE owner = %s AND NOT (topic = ANY(%s))",
            (owner, [t for t, _ in entries]),
        )
        for topic, vector in entries:
            conn.execute(
                # clock_timestamp(): topics saved together keep the order given
                "INSERT INTO interest_topics (owner, topic, embedding, created_at)"
                " VALUES (%s, %s, %s::halfvec, clock_timestamp()) ON CONFLICT (owner, topic) DO NOTHING",
                (owner, topic, to_pgvector_text(vector)),
            )


# ---- ratings ------------------------------------------------------------------------------------


def rate(conn: psycopg.Connection, owner: str, paper_id: str, rating: int, source: str) -> bool:
    """Sets (rating ±1) or clears (0) a rating; False when the paper is not in the corpus."""
    if rating == 0:
        conn.execute("DELETE FROM paper_ratings WHERE owner = %s AND paper_id = %s", (owner, paper_id))
        return conn.execute("SELECT 1 FROM papers WHERE paper_id = %s", (paper_id,)).fetchone() is not None
    row = conn.execute(
        "INSERT INTO paper_ratings (owner, paper_id, rating, source)"
        " SELECT %s, paper_id, %s, %s FROM papers WHERE paper_id = %s"
        " ON CONFLICT (owner, paper_id) DO UPDATE SET rating = EXCLUDED.rating,"
        " source = EXCLUDED.source, rated_at = now()"
        " RETURNING paper_id",
        (owner, rating, source, paper_id),
    ).fetchone()
    return row is not None


def rate_many(conn: psycopg.Connection, owner: str, paper_ids: list[str], rating: int, source: str) -> int:
    """👍/👎 for papers known to exist (an imported library); a paper rated already keeps its rating."""
    cur = conn.execute(
        "INSERT INTO paper_ratings (owner, paper_id, rating, source)"
        " SELECT %s, paper_id, %s, %s FROM papers WHERE paper_id = ANY(%s)"
        " ON CONFLICT (owner, paper_id) DO NOTHING",
        (owner, rating, source, paper_ids),
    )
    return cur.rowcount


def ratings(conn: psycopg.Connection, owner: str) -> list[Rating]:
    rows = conn.execute(
        "SELECT paper_id, rating, source, rated_at FROM paper_ratings"
        " WHERE owner = %s ORDER BY rated_at DESC",
        (owner,),
    ).fetchall()
    return [Rating(paper_id=r[0], rating=r[1], source=r[2], rated_at=r[3]) for r in rows]


def rating_of(conn: psycopg.Connection, owner: str, paper_ids: list[str]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT paper_id, rating FROM paper_ratings WHERE owner = %s AND paper_id = ANY(%s)",
        (owner, paper_ids),
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def rated_vectors(conn: psycopg.Connection, owner: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(paper ids, ratings, title+abstract vectors) of the user's rated papers that have a vector."""
    rows = conn.execute(
        "SELECT r.paper_id, r.rating, p.embedding FROM paper_ratings r JOIN papers p USING (paper_id)"
        " WHERE r.owner = %s AND p.embedding IS NOT NULL ORDER BY r.rated_at DESC, r.paper_id",
        (owner,),
        binary=True,
    ).fetchall()
    return [r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.int8), _vectors([r[2] for r in rows])


def cited_vectors(conn: psycopg.Connection, owner: str, limit: int = 500) -> tuple[list[str], np.ndarray]:
    """Papers the user's chats cited (newest first), unrated ones only: the implicit positives."""
    rows = conn.execute(
        "SELECT p.paper_id, p.embedding FROM papers p JOIN ("
        "  SELECT cited, max(m.created_at) AS last FROM chats c JOIN messages m USING (chat_id),"
        "  unnest(m.citations) AS cited WHERE c.owner = %s AND m.role = 'assistant' GROUP BY cited"
        ") used ON used.cited = p.paper_id"
        " WHERE p.embedding IS NOT NULL AND NOT EXISTS ("
        "  SELECT 1 FROM paper_ratings r WHERE r.owner = %s AND r.paper_id = p.paper_id)"
        " ORDER BY used.last DESC LIMIT %s",
        (owner, owner, limit),
        binary=True,
    ).fetchall()
    return [r[0] for r in rows], _vectors([r[1] for r in rows])


# ---- the profile --------------------------------------------------------------------------------

_PROFILE = (
    "owner, weights, trained_on, trained_at, implicit, visited_at, previous_visit,"
    " feed_token_hash IS NOT NULL"
)


def _profile(row: tuple) -> Profile:
    return Profile(
        owner=row[0],
        weights=list(row[1]) if row[1] is not None else None,
        trained_on=row[2] or {},
        trained_at=row[3],
        implicit=row[4],
        visited_at=row[5],
        previous_visit=row[6],
        has_feed=row[7],
    )


def profile(conn: psycopg.Connection, owner: str) -> Profile:
    row = conn.execute(f"SELECT {_PROFILE} FROM inbox_profiles WHERE owner = %s", (owner,)).fetchone()
    return _profile(row) if row else Profile(owner=owner)


def profiles(conn: psycopg.Connection) -> list[Profile]:
    rows = conn.execute(f"SELECT {_PROFILE} FROM inbox_profiles ORDER BY owner").fetchall()
    return [_profile(r) for r in rows]


def owners_with_interests(conn: psycopg.Connection) -> list[str]:
    """Everyone the nightly refresh trains for: whoever follows a topic, rated a paper or has a profile."""
    rows = conn.execute(
        "SELECT owner FROM interest_topics UNION SELECT owner FROM paper_ratings"
        " UNION SELECT owner FROM inbox_profiles ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def lock_owner(conn: psycopg.Connection, owner: str) -> None:
    """Until the transaction ends, nobody else retrains this owner: two 👍 in quick succession
    would otherwise each learn without the other's and the later save would drop one."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (owner,))


def save_weights(
    conn: psycopg.Connection, owner: str, weights: np.ndarray | None, trained_on: dict[str, int]
) -> None:
    conn.execute(
        "INSERT INTO inbox_profiles (owner, weights, trained_on, trained_at) VALUES (%s, %s, %s, now())"
        " ON CONFLICT (owner) DO UPDATE SET weights = EXCLUDED.weights, trained_on = EXCLUDED.trained_on,"
        " trained_at = EXCLUDED.trained_at",
        (owner, None if weights is None else [float(x) for x in weights], Jsonb(trained_on)),
    )


def set_implicit(conn: psycopg.Connection, owner: str, implicit: bool) -> None:
    conn.execute(
        "INSERT INTO inbox_profiles (owner, implicit) VALUES (%s, %s)"
        " ON CONFLICT (owner) DO UPDATE SET implicit = EXCLUDED.implicit",
        (owner, implicit),
    )


def record_visit(conn: psycopg.Connection, owner: str, new_visit_after_seconds: float) -> datetime | None:
    """Notes a visit of the inbox; returns when the visit before it was (None: the first). Visits
    closer together than `new_visit_after_seconds` are one visit (a reload does not empty the inbox)."""
    row = conn.execute(
        "INSERT INTO inbox_profiles (owner, visited_at) VALUES (%s, now())"
        " ON CONFLICT (owner) DO UPDATE SET"
        "  previous_visit = CASE WHEN inbox_profiles.visited_at IS NULL"
        "    OR inbox_profiles.visited_at < now() - make_interval(secs => %s)"
        "    THEN inbox_profiles.visited_at ELSE inbox_profiles.previous_visit END,"
        "  visited_at = CASE WHEN inbox_profiles.visited_at IS NULL"
        "    OR inbox_profiles.visited_at < now() - make_interval(secs => %s)"
        "    THEN now() ELSE inbox_profiles.visited_at END"
        " RETURNING previous_visit",
        (owner, new_visit_after_seconds, new_visit_after_seconds),
    ).fetchone()
    return row[0] if row else None


def set_feed_token_hash(conn: psycopg.Connection, owner: str, token_hash: bytes | None) -> None:
    conn.execute(
        "INSERT INTO inbox_profiles (owner, feed_token_hash) VALUES (%s, %s)"
        " ON CONFLICT (owner) DO UPDATE SET feed_token_hash = EXCLUDED.feed_token_hash",
        (owner, token_hash),
    )


def owner_of_feed(conn: psycopg.Connection, token_hash: bytes) -> str | None:
    row = conn.execute(
        "SELECT owner FROM inbox_profiles WHERE feed_token_hash = %s", (token_hash,)
    ).fetchone()
    return row[0] if row else None


def forget_owner(conn: psycopg.Connection, owner: str) -> None:
    """Everything the inbox knows of a user (an account deleted)."""
    for table in ("interest_topics", "paper_ratings", "inbox_profiles"):
        conn.execute(f"DELETE FROM {table} WHERE owner = %s", (owner,))


# ---- the papers the inbox ranks -----------------------------------------------------------------

_CANDIDATE = "paper_id, title, authors, abstract, categories, published, first_ingested_at, embedding"


def _candidate(row: tuple) -> Candidate:
    return Candidate(
        paper_id=row[0],
        title=row[1],
        authors=list(row[2] or []),
        abstract=row[3],
        categories=list(row[4] or []),
        published=row[5],
        arrived=row[6],
        vector=_vectors([row[7]])[0],
    )


def arrived(
    conn: psycopg.Connection, since: datetime, until: datetime | None = None, limit: int = 20000
) -> tuple[list[str], np.ndarray]:
    """(paper ids, vectors) of the papers that first arrived in [since, until), newest first: only
    what ranking needs (the cards of the few shown are read afterwards, `candidates`)."""
    rows = conn.execute(
        "SELECT paper_id, embedding FROM papers"
        " WHERE first_ingested_at >= %s AND (%s::timestamptz IS NULL OR first_ingested_at < %s)"
        " AND embedding IS NOT NULL ORDER BY first_ingested_at DESC, paper_id LIMIT %s",
        (since, until, until, limit),
        binary=True,
    ).fetchall()
    return [r[0] for r in rows], _vectors([r[1] for r in rows])


def candidates(conn: psycopg.Connection, paper_ids: list[str]) -> list[Candidate]:
    """The cards of these papers, in the order asked (those without a vector left out)."""
    rows = conn.execute(
        f"SELECT {_CANDIDATE} FROM papers WHERE paper_id = ANY(%s) AND embedding IS NOT NULL",
        (paper_ids,),
        binary=True,
    ).fetchall()
    found = {r[0]: _candidate(r) for r in rows}
    return [found[pid] for pid in paper_ids if pid in found]


def nearest(conn: psycopg.Connection, vector: np.ndarray, k: int, exclude: list[str]) -> list[Candidate]:
    """The k papers whose vectors are nearest `vector` (the HNSW index), `exclude` left out."""
    rows = conn.execute(
        f"SELECT {_CANDIDATE} FROM papers WHERE embedding IS NOT NULL AND NOT (paper_id = ANY(%s))"
        " ORDER BY embedding <=> %s::halfvec LIMIT %s",
        (exclude, to_pgvector_text(vector), k),
        binary=True,
    ).fetchall()
    return [_candidate(r) for r in rows]


def sample_vectors(conn: psycopg.Connection, n: int, seed: int) -> np.ndarray:
    """About `n` vectors of corpus papers drawn at random, the same ones for the same seed and corpus:
    the negatives a user's model learns "not everything is interesting" from. Pages are sampled
    (SYSTEM), not rows, and the size comes from the planner's estimate: no pass over the table."""
    estimate = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'papers'::regclass").fetchone()
    count = int(estimate[0]) if estimate and estimate[0] and estimate[0] > 0 else 0
    if count == 0:  # never analysed (a new corpus): small enough to count
        total = conn.execute("SELECT count(*) FROM papers").fetchone()
        count = int(total[0]) if total else 0
    if count == 0:
        return _vectors([])
    percent = min(100.0, 100.0 * n * 1.5 / count)
    rows = conn.execute(
        "SELECT embedding FROM papers TABLESAMPLE SYSTEM (%s) REPEATABLE (%s)"
        " WHERE embedding IS NOT NULL ORDER BY md5(paper_id) LIMIT %s",
        (percent, seed, n),
        binary=True,
    ).fetchall()
    return _vectors([r[0] for r in rows])


def find_by_titles(conn: psycopg.Connection, title_keys: list[str]) -> dict[str, str]:
    # A pass over every title, for an import (rare); a stored key column would serve a busier use.
    """{title key: paper id} for papers whose title, lower-cased with only letters and digits kept,
    is one of `title_keys` (an imported library's entries without an arXiv id)."""
    rows = conn.execute(
        "SELECT k, paper_id FROM (SELECT regexp_replace(lower(title), '[^[:alnum:]]+', '', 'g') AS k,"
        " paper_id FROM papers) t WHERE k = ANY(%s)",
        (title_keys,),
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def existing(conn: psycopg.Connection, paper_ids: list[str]) -> set[str]:
    rows = conn.execute("SELECT paper_id FROM papers WHERE paper_id = ANY(%s)", (paper_ids,)).fetchall()
    return {r[0] for r in rows}
