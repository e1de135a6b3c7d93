"""Inbox load time: GET /api/inbox over loopback with a day of new papers, on the served app.

    python bench/inbox_load.py [--day 1000] [--older 50000] [--requests 30]

A scratch embedded database gets `--older` papers, then, after a timestamp, `--day` new ones
(random unit vectors, real-looking metadata). A user follows three topics and rates twenty papers
👍/👎 (so the inbox is ranked by a trained model, with reasons); then the inbox of that day is
fetched `--requests` times on one kept-alive connection: the first 50 (what the page shows first)
and the whole day at once. Prints p50 / p95 / max in ms; the target is ≤ 300 ms with 1,000 papers.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api import served
from bench.scratch import scratch_services
from corpus.models import PaperMeta
from corpus.papers import BulkPaper, copy_papers

WORDS = "graph neural network attention retrieval robust learning vision language model sparse".split()


def papers(rng: np.random.Generator, start: int, n: int) -> list[BulkPaper]:
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    out = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS, 6))
        meta = PaperMeta(
            paper_id=f"2611.{start + i:05d}",
            version=1,
            authors=[f"Author {i % 97}", f"Author {(i * 7) % 89}", "A. Third", "B. Fourth"],
            abstract=f"We study {words}. " * 8,
            categories=["cs.LG", "cs.CL"],
            primary_category="cs.LG",
            published=datetime(2026, 11, 24, tzinfo=UTC),
        )
        out.append(BulkPaper(meta=meta, title=f"On {words}", source="arxiv", vector=vectors[i]))
    return out


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values) * 1000, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--day", type=int, default=1000)
    parser.add_argument("--older", type=int, default=50000)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()

    services, _ = scratch_services("chatpapers-bench-inbox-")
    rng = np.random.default_rng(0)
    with services.db.connect() as conn, conn.transaction():
        copy_papers(conn, papers(rng, 0, args.older))
    since = datetime.now(UTC)
    time.sleep(0.05)
    with services.db.connect() as conn, conn.transaction():
        copy_papers(conn, papers(rng, args.older, args.day))
    print(f"corpus: {args.older} older papers, {args.day} new since {since:%H:%M:%S}")

    with served(services.settings) as base, httpx.Client(base_url=base, timeout=60) as client:
        client.get("/api/auth/session")
        token = client.post(
            "/api/auth/register",
            json={"username": "bench-reader", "password": "correct horse battery"},
            headers={"X-CSRF-Token": client.cookies["chatpapers_csrf"]},
        ).json()["csrf_token"]
        h = {"X-CSRF-Token": token}
        client.put(
            "/api/inbox/topics", json={"topics": ["graph neural networks", "retrieval", "vision"]}, headers=h
        )
        for i, n in enumerate(rng.choice(args.day, 20, replace=False)):
            pid = f"2611.{args.older + int(n):05d}"
            res = client.put(f"/api/inbox/ratings/{pid}", json={"rating": 1 if i % 3 else -1}, headers=h)
            res.raise_for_status()
        print(f"profile: {res.json()['profile']}")
        print("| GET /api/inbox (one day) | papers returned | p50 | p95 | max |")
        print("|---|---|---|---|---|")
        for limit in (50, args.day):
            seconds = []
            for _ in range(args.requests):
                started = time.perf_counter()
                res = client.get("/api/inbox", params={"since": since.isoformat(), "limit": limit})
                seconds.append(time.perf_counter() - started)
                res.raise_for_status()
            body = res.json()
            assert body["total"] == args.day and body["ranked_by"] == "model", body["total"]
            print(
                f"| {args.day} new, first {limit} | {len(body['papers'])} | {pct(seconds, 50):.0f} ms |"
                f" {pct(seconds, 95):.0f} ms | {pct(seconds, 100):.0f} ms |"
            )


if __name__ == "__main__":
    main()
