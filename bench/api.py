"""Web API benchmark: concurrent chat sessions against the served app on loopback. Prints figures.

    python bench/api.py [--users 50] [--messages 5]

Ingests a small corpus subset into a scratch embedded database, starts `bench.api_server` (the real
app with a scripted chat model) as its own process, then: every user registers and creates a chat
(not timed), and all users at once send their messages one after another, reading each SSE answer.
Measured per message: time to the first SSE event and to the final event; counted: HTTP errors
(5xx apart), error events, and cross-user reads (each user tries to read another user's chat).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scratch import scratch_settings
from corpus.db import Database
from corpus.embedder import Embedder
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared/corpus"
SUBSET = ["1706.03762", "1512.03385", "2010.11929", "1212.5701", "1503.02531", "2304.02623", "1608.03417"]
QUESTIONS = [
    "What problem do deep residual networks solve?",
    "How does the Transformer use attention instead of recurrence?",
    "What is knowledge distillation?",
    "How does ADADELTA adapt the learning rate?",
    "How do vision transformers split images into patches?",
]


def subset_dir(work: Path) -> tuple[Path, Path]:
    folder = work / "pdfs"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in (CORPUS / "metadata.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if any(Path(rec["file"]).name.startswith(pid + "v") for pid in SUBSET):
            (folder / Path(rec["file"]).name).symlink_to(CORPUS / rec["file"])
            lines.append(line)
    meta = work / "metadata.jsonl"
    meta.write_text("\n".join(lines) + "\n")
    return folder, meta


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tally:
    def __init__(self) -> None:
        self.first_event: list[float] = []
        self.full_answer: list[float] = []
        self.status: dict[int, int] = {}
        self.error_events = 0
        self.cross_user_reads = 0


class User:
    def __init__(self, client: httpx.AsyncClient, token: str, chat_id: str) -> None:
        self.client, self.token, self.chat_id = client, token, chat_id


async def sign_up(base: str, number: int) -> User:
    client = httpx.AsyncClient(base_url=base, timeout=120)
    token = (await client.get("/api/auth/session")).json()["csrf_token"]
    res = await client.post(
        "/api/auth/register",
        json={"username": f"bench{number}-{os.getpid()}", "password": "benchmark password"},
        headers={"X-CSRF-Token": token},
    )
    token = res.json()["csrf_token"]
    chat = await client.post("/api/chats", json={}, headers={"X-CSRF-Token": token})
    return User(client, token, chat.json()["chat_id"])


async def talk(user: User, number: int, messages: int, tally: Tally) -> None:
    for i in range(messages):
        started = time.perf_counter()
        first = None
        async with user.client.stream(
            "POST",
            f"/api/chats/{user.chat_id}/messages",
            json={"content": QUESTIONS[(number + i) % len(QUESTIONS)]},
            headers={"X-CSRF-Token": user.token},
        ) as res:
            tally.status[res.status_code] = tally.status.get(res.status_code, 0) + 1
            if res.status_code != 200:
                await res.aread()
                continue
            async for line in res.aiter_lines():
                if not line.startswith("event:"):
                    continue
                if first is None:
                    first = time.perf_counter() - started
                    tally.first_event.append(first)
                kind = line[6:].strip()
                tally.error_events += kind == "error"
                if kind in ("final", "error"):
                    tally.full_answer.append(time.perf_counter() - started)


async def check_isolation(users: list[User], tally: Tally) -> None:
    """Every user reads the next user's chat (must be 404) and lists only their own chat."""
    for i, user in enumerate(users):
        other = users[(i + 1) % len(users)]
        if (await user.client.get(f"/api/chats/{other.chat_id}/messages")).status_code != 404:
            tally.cross_user_reads += 1
        listed = (await user.client.get("/api/chats")).json()
        if [c["chat_id"] for c in listed] != [user.chat_id]:
            tally.cross_user_reads += 1


async def run(base: str, users: int, messages: int) -> tuple[Tally, float]:
    tally = Tally()
    people = [await sign_up(base, n) for n in range(users)]  # not timed: argon2 is slow on purpose
    started = time.perf_counter()
    await asyncio.gather(*(talk(u, n, messages, tally) for n, u in enumerate(people)))
    wall = time.perf_counter() - started
    await check_isolation(people, tally)
    for u in people:
        await u.client.aclose()
    return tally, wall


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) * 1000 if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=5)
    args = parser.parse_args()

    settings, _ = scratch_settings("chatpapers-bench-api-")
    folder, meta = subset_dir(settings.data_dir / "subset")
    report = IngestPipeline(settings, Database(settings), Embedder()).run(pdf_dir_items(folder, meta))
    print(f"corpus: {report.new} papers, {report.chunks} chunks")

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.api_server",
            "--database-url",
            settings.database_url or "",
            "--port",
            str(port),
            "--data-dir",
            str(settings.data_dir),
        ],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:  # wait until it serves and has warmed up (embedder loaded)
            try:
                health = httpx.get(f"{base}/health", timeout=5).json()
                if "loaded" in health["embedder"]["detail"].replace("not loaded", ""):
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        tally, wall = asyncio.run(run(base, args.users, args.messages))
    finally:
        server.terminate()
        server.wait(timeout=150)

    sent = args.users * args.messages
    five_xx = sum(n for code, n in tally.status.items() if code >= 500)
    print(
        f"{args.users} concurrent users x {args.messages} messages = {sent} answers in {wall:.1f} s "
        f"({sent / wall:.1f} answers/s)"
    )
    for label, values, note in (
        ("first SSE event", tally.first_event, "   (target p95 <= 300 ms)"),
        ("full answer", tally.full_answer, ""),
    ):
        print(
            f"{label:<17} p50 {pct(values, 50):7.0f} ms   p95 {pct(values, 95):7.0f} ms"
            f"   max {pct(values, 100):7.0f} ms{note}"
        )
    print(
        f"HTTP statuses {dict(sorted(tally.status.items()))}; 5xx: {five_xx}; error events: "
        f"{tally.error_events}; cross-user reads: {tally.cross_user_reads}"
    )


if __name__ == "__main__":
    main()
