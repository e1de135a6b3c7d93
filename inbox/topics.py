"""Followed topics: free text, checked and embedded like a question."""

from __future__ import annotations

import psycopg

from corpus import interests
from corpus.embedder import Embedder
from corpus.text import one_line

MAX_TOPICS = 50
MAX_TOPIC_CHARS = 200


class TopicError(ValueError):
    """The topics asked for cannot be followed (the message says why)."""


def clean(topics: list[str]) -> list[str]:
    """One line each, duplicates (ignoring case) dropped; TopicError for an empty or too long topic
    or too many of them."""
    out: list[str] = []
    for raw in topics:
        topic = one_line(raw)
        if not topic:
            raise TopicError("a topic is empty")
        if len(topic) > MAX_TOPIC_CHARS:
            raise TopicError(f"a topic is longer than {MAX_TOPIC_CHARS} characters")
        if topic.casefold() not in {t.casefold() for t in out}:
            out.append(topic)
    if len(out) > MAX_TOPICS:
        raise TopicError(f"{len(out)} topics; at most {MAX_TOPICS} can be followed")
    return out


def follow(conn: psycopg.Connection, embedder: Embedder, owner: str, topics: list[str]) -> list[str]:
    """The user follows exactly `topics` (checked first: nothing changes on an error)."""
    wanted = clean(topics)
    have = {t for t, _ in interests.topics(conn, owner)}
    new = [t for t in wanted if t not in have]
    vectors = embedder.embed(new) if new else []
    embedded = dict(zip(new, vectors, strict=True))
    kept = {t: v for t, v in interests.topics(conn, owner) if t in wanted}
    interests.replace_topics(conn, owner, [(t, embedded[t] if t in embedded else kept[t]) for t in wanted])
    return wanted
