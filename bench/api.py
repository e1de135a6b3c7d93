"""Web API benchmark: concurrent chat sessions against the served app on loopback. Prints figures.

    python bench/api.py [--users 50] [--messages 5] [--no-load]

Ingests a small corpus subset into a scratch embedded database, starts `bench.api_server` (the real
app with a scripted chat model) as its own process, then: every user registers and creates a chat
(not timed), and all users at once send their messages one after another, reading each SSE answer.
Measured per message: time to the first SSE event and to the final event; counted: HTTP errors
(5xx apart), error events, and cross-user reads (each user tries to read another user's chat).

Then TCP_NODELAY, side by side: the app served on a socket bound as `serve` binds it now
(IPPROTO_TCP, so asyncio sets TCP_NODELAY) and on one bound as before (protocol 0), each with a
model that streams a word every 20 ms. Measured on each: a small GET repeated on one kept-alive
connection, and the gaps between token events of streamed answers.
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
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scratch import scratch_services
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
        self.opening: list[float] = []  # first messages: all users send at the same instant
        self.later: list[float] = []
        self.full_answer: list[float] = []
        self.status: dict[int, int] = {}
        self.error_events = 0
        self.cross_user_reads = 0


class User:
    def __init__(self, client: httpx.AsyncClient, token: str, chat_id: str) -> None:
        self.client, self.token, self.chat_id = client, token, chat_id
        self.cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())


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


class SseConnection:
    """A bare keep-alive HTTP/1.1 connection for the timed part: httpx spends milliseconds of
    Python per request, which on two shared cores would be measured as server latency."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, base: str) -> SseConnection:
        host, port = base.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, f"{host}:{port}")

    async def post(
        self, path: str, payload: dict, headers: dict[str, str]
    ) -> tuple[int, AsyncIterator[bytes]]:
        body = json.dumps(payload).encode()
        head = [f"POST {path} HTTP/1.1", f"Host: {self.host}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in {**headers, "Content-Type": "application/json"}.items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status, fields = await self._head()
        return status, self._body(fields)

    async def _head(self) -> tuple[int, dict[str, str]]:
        """The response's status and header fields (names in lower case)."""
        status = int((await self.reader.readline()).split()[1])
        fields = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            fields[name.strip().lower()] = value.strip()
        return status, fields

    async def get(self, path: str, headers: dict[str, str]) -> int:
        head = [f"GET {path} HTTP/1.1", f"Host: {self.host}", *(f"{k}: {v}" for k, v in headers.items())]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        status, fields = await self._head()
        async for _ in self._body(fields):
            pass
        return status

    async def _body(self, fields: dict[str, str]) -> AsyncIterator[bytes]:
        if fields.get("transfer-encoding") == "chunked":
            while size := int((await self.reader.readline()).strip(), 16):
                yield await self.reader.readexactly(size + 2)
            await self.reader.readline()
        else:
            yield await self.reader.readexactly(int(fields.get("content-length", 0)))

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def talk(user: User, conn: SseConnection, number: int, messages: int, tally: Tally) -> None:
    headers = {"X-CSRF-Token": user.token, "Cookie": user.cookie}
    for i in range(messages):
        started = time.perf_counter()
        first = None
        status, body = await conn.post(
            f"/api/chats/{user.chat_id}/messages",
            {"content": QUESTIONS[(number + i) % len(QUESTIONS)]},
            headers,
        )
        tally.status[status] = tally.status.get(status, 0) + 1
        async for data in body:
            if status != 200:
                continue
            for line in data.decode().splitlines():
                if not line.startswith("event:"):
                    continue
                if first is None:
                    first = time.perf_counter() - started
                    tally.first_event.append(first)
                    (tally.opening if i == 0 else tally.later).append(first)
                kind = line[6:].strip()
                tally.error_events += kind == "error"
                if kind in ("final", "error"):
                    tally.full_answer.append(time.perf_counter() - started)


async def check_isolation(users: list[User], tally: Tally) -> None:
    """Every user reads the next user's chat (must be 404) and lists only their own chat."""
    for i, user in enumerate(users):
        if len(users) < 2:
            break
        other = users[(i + 1) % len(users)]
        if (await user.client.get(f"/api/chats/{other.chat_id}/messages")).status_code != 404:
            tally.cross_user_reads += 1
        listed = (await user.client.get("/api/chats")).json()
        if [c["chat_id"] for c in listed] != [user.chat_id]:
            tally.cross_user_reads += 1


async def run(base: str, users: int, messages: int) -> tuple[Tally, float]:
    tally = Tally()
    people = [await sign_up(base, n) for n in range(users)]  # not timed: argon2 is slow on purpose
    conns = [await SseConnection.open(base) for _ in people]
    started = time.perf_counter()
    await asyncio.gather(
        *(talk(u, c, n, messages, tally) for n, (u, c) in enumerate(zip(people, conns, strict=True)))
    )
    wall = time.perf_counter() - started
    for c in conns:
        await c.close()
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
    parser.add_argument(
        "--load", action=argparse.BooleanOptionalAction, default=True, help="run the concurrent part"
    )
    args = parser.parse_args()

    services, _ = scratch_services("chatpapers-bench-api-")
    settings = services.settings
    folder, meta = subset_dir(settings.data_dir / "subset")
    ingested = IngestPipeline(settings, services.db, services.embedder).run(pdf_dir_items(folder, meta))
    print(f"corpus: {ingested.new} papers, {ingested.chunks} chunks")

    if args.load:
        with served(settings) as base:
            tally, wall = asyncio.run(run(base, args.users, args.messages))
        report(tally, wall, args.users, args.messages)
    nodelay(settings)


@contextmanager
def served(settings, listener: str = "tcp", token_ms: float = 0.0) -> Iterator[str]:
    """bench.api_server in its own process, warmed up; yields its base URL."""
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
            "--listener",
            listener,
            "--token-ms",
            str(token_ms),
        ],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:  # wait until it serves and has warmed up
            try:
                health = httpx.get(f"{base}/health", timeout=5).json()
                if health["warmed_up"]:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=150)


async def reused_and_streamed(base: str, requests: int, answers: int) -> tuple[list[float], list[float]]:
    """Seconds per small GET on one kept-alive connection; seconds between token events."""
    user = await sign_up(base, 10_000 + free_port())
    headers = {"X-CSRF-Token": user.token, "Cookie": user.cookie}
    conn = await SseConnection.open(base)
    latencies, gaps = [], []
    for _ in range(requests):
        started = time.perf_counter()
        await conn.get("/api/auth/session", headers)
        latencies.append(time.perf_counter() - started)
    for i in range(answers):
        _, body = await conn.post(
            f"/api/chats/{user.chat_id}/messages", {"content": QUESTIONS[i % len(QUESTIONS)]}, headers
        )
        last = None
        async for data in body:
            for line in data.decode().splitlines():
                if line.strip() == "event: token":
                    now = time.perf_counter()
                    if last is not None:
                        gaps.append(now - last)
                    last = now
    await conn.close()
    await user.client.aclose()
    return latencies, gaps


def nodelay(settings) -> None:
    print("\nTCP_NODELAY (a word streamed every 20 ms; the same app and database):")
    print("| listening socket | reused-connection GET p50 | p95 | token-event gap p50 | p95 | max |")
    print("|---|---|---|---|---|---|")
    for listener, label in (("untyped", "protocol 0 (before)"), ("tcp", "IPPROTO_TCP (now)")):
        with served(settings, listener, token_ms=20) as base:
            latencies, gaps = asyncio.run(reused_and_streamed(base, requests=200, answers=3))
        print(
            f"| {label} | {pct(latencies, 50):.1f} ms | {pct(latencies, 95):.1f} ms | "
            f"{pct(gaps, 50):.1f} ms | {pct(gaps, 95):.1f} ms | {pct(gaps, 100):.1f} ms |"
        )


def report(tally: Tally, wall: float, users: int, messages: int) -> None:
    sent = users * messages
    five_xx = sum(n for code, n in tally.status.items() if code >= 500)
    print(
        f"{users} concurrent users x {messages} messages = {sent} answers in {wall:.1f} s "
        f"({sent / wall:.1f} answers/s)"
    )
    for label, values, note in (
        ("first SSE event", tally.first_event, "   (target p95 <= 300 ms)"),
        ("  opening burst", tally.opening, f"   ({users} sends at one instant)"),
        ("  afterwards", tally.later, ""),
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
