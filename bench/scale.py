"""Scale benchmark: an N-chunk corpus through the project's own schema, migrations and SQL.

    python bench/scale.py --chunks 1000000 [--work DIR] [--queries 200] [--binary] [--layouts] [--reuse]

Vectors are drawn around real MiniLM embeddings of ../shared/corpus chunks (each synthetic paper
follows one real paper: its chunks mix neighbouring real chunk vectors plus noise), chunk texts are
real chunks, papers get real titles and abstracts, arXiv-like ids, cs.* categories and submission
dates spread over 2010-2026 with arXiv's growth. The truth for recall is computed exactly while the
vectors are generated (streamed top-k per query in numpy, on the float16 values the database
stores), so no exact database scan is needed even at 10M.

It prints: load time (binary COPY), HNSW build time, table and index sizes, bytes per chunk, the
RAM that keeps the index cached; per tool query (`search`: chunk ANN and the tool's whole hybrid
query; `get_recent_papers` with the tool's default window (two years) and with 30 days;
`get_information_from_paper`; prior/next chunk) p50/p95 at 1 and 8 concurrent clients and recall
against the truth; with --binary the same for the binary-quantized index; and the time to add a
nightly increment of new papers (--increment chunks) to the indexed corpus the way ingest writes
them (one transaction per paper).

--layouts also measures two other layouts of the chunk vectors, copies with each paper's submission
date beside its vectors (corpus/chunk_layouts.py): one table whose date filter is an iterative index
scan, and a table partitioned by month with an HNSW index per month; for each: build time, size,
search with no filter and with each date window (p50/p95, recall against the window's exact top 10),
and an increment (--layout-increment chunks dated today) written one paper per transaction.

--noise sets the per-dimension noise of the synthetic vectors (0.02; 0.012 gives them the real
chunks' local intrinsic dimensionality, which the bench prints for both).

--reuse keeps a database already loaded by an earlier run with the same --chunks, --seed and
--noise and only measures (the generation is repeated to rebuild the truth; nothing is written),
after building the chunk index again when --m / --ef-construction differ from the ones it was built
with.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import psutil
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.figures import pct
from corpus import chunk_index, chunk_layouts, papers
from corpus.db import Database, drop_database, ensure_database
from corpus.embedded import start_embedded
from corpus.embedder import Embedder
from corpus.models import ChunkRecord, PaperMeta
from corpus.server_sizing import sized_for
from ground.settings import load_settings
from ingest.prepare import prepare_pdf

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
DIM = 384
NEWEST = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
FIRST_YEAR = 2010
GROWTH = 1.18  # arXiv cs submissions grew by roughly this factor a year
NOISE = 0.02  # per dimension: a synthetic chunk stays ~0.93 cosine from the real passages it mixes
K = 10
CATEGORIES = ["cs.LG", "cs.CV", "cs.CL", "cs.AI", "cs.RO", "cs.CR", "cs.DS", "cs.IR", "cs.SE", "cs.DC"]


# ---- the real material ---------------------------------------------------------------------------
@dataclass
class Base:
    vectors: np.ndarray  # (n_chunks, 384) float32, unit rows
    texts_z: list[bytes]  # packed chunk texts
    paper_of: np.ndarray  # chunk -> base paper
    starts: np.ndarray  # base paper -> first chunk
    counts: np.ndarray  # base paper -> chunk count
    paper_vectors: np.ndarray  # base paper -> title + abstract vector
    titles: list[str]
    abstracts: list[str | None]
    authors: list[list[str]]
    queries: list[str]  # first sentences of chunks, the searches people type


def build_base(work: Path, embedder: Embedder, pdfs: int | None = None) -> Base:
    cache = work / ("base.npz" if pdfs is None else f"base-{pdfs}.npz")
    if not cache.exists():
        meta = {}
        for line in (CORPUS / "metadata.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                meta[record.get("file") or ""] = record
        texts: list[str] = []
        paper_of: list[int] = []
        titles, abstracts, authors, paper_texts = [], [], [], []
        for pdf in sorted((CORPUS / "pdfs").glob("*.pdf"))[:pdfs]:
            prepared = prepare_pdf(pdf, 1000, 0)
            if prepared.status != "ok" or not prepared.chunks:
                continue
            record = meta.get(pdf.name, {})
            title = " ".join(str(record.get("title") or pdf.stem).split())
            abstract = " ".join(str(record.get("abstract") or "").split()) or None
            paper = len(titles)
            titles.append(title)
            abstracts.append(abstract)
            who = record.get("authors") or []
            authors.append(who if isinstance(who, list) else [str(who)])
            paper_texts.append(f"{title}. {abstract or prepared.chunks[0].text[:600]}")
            for chunk in prepared.chunks:
                texts.append(chunk.text)
                paper_of.append(paper)
        print(f"embedding {len(texts)} real chunks of {len(titles)} papers (once, cached in {cache}) ...")
        vectors = embedder.embed(texts)
        paper_vectors = embedder.embed(paper_texts)
        np.savez(
            cache,
            vectors=vectors,
            paper_vectors=paper_vectors,
            paper_of=np.asarray(paper_of),
            meta=np.asarray(
                json.dumps({"texts": texts, "titles": titles, "abstracts": abstracts, "authors": authors})
            ),
        )
    data = np.load(cache)
    meta = json.loads(str(data["meta"]))
    paper_of = data["paper_of"]
    counts = np.bincount(paper_of)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rng = random.Random(7)
    queries = []
    for i in rng.sample(range(len(meta["texts"])), min(2000, len(meta["texts"]))):
        sentence = meta["texts"][i].split(". ")[0].strip()
        if 40 <= len(sentence) <= 300:
            queries.append(sentence)
    return Base(
        vectors=data["vectors"],
        texts_z=[papers.pack_text(t) for t in meta["texts"]],
        paper_of=paper_of,
        starts=starts,
        counts=counts,
        paper_vectors=data["paper_vectors"],
        titles=meta["titles"],
        abstracts=meta["abstracts"],
        authors=meta["authors"],
        queries=queries,
    )


# ---- the synthetic corpus ------------------------------------------------------------------------
def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@dataclass
class SynthPaper:
    meta: PaperMeta
    base: int  # the real paper it follows
    partner: int  # the real paper whose passages flavour it (no two synthetic papers read alike)
    n_chunks: int
    weight: float  # of its own real paper against the partner


def paper_plan(base: Base, n_chunks: int, seed: int, newest: datetime = NEWEST) -> list[SynthPaper]:
    """Papers until `n_chunks` chunks: each follows a random real paper, dated by arXiv's growth."""
    rng = np.random.default_rng(seed)
    months = [(y, m) for y in range(FIRST_YEAR, newest.year + 1) for m in range(1, 13)]
    months = [(y, m) for y, m in months if (y, m) <= (newest.year, newest.month)]
    weights = np.asarray([GROWTH ** (y - FIRST_YEAR + m / 12) for y, m in months])
    weights /= weights.sum()
    plan: list[SynthPaper] = []
    per_month: dict[tuple[int, int], int] = {}
    total = 0
    while total < n_chunks:
        b = int(rng.integers(len(base.counts)))
        count = min(int(base.counts[b]), n_chunks - total)
        y, m = months[int(rng.choice(len(months), p=weights))]
        last_day = (datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=UTC) - timedelta(days=1)).day
        if (y, m) == (newest.year, newest.month):
            last_day = newest.day
        published = datetime(y, m, int(rng.integers(1, last_day + 1)), int(rng.integers(0, 24)), tzinfo=UTC)
        number = per_month.get((y, m), 0) + 1
        per_month[(y, m)] = number
        primary = CATEGORIES[int(rng.integers(len(CATEGORIES)))]
        meta = PaperMeta(
            paper_id=f"{y % 100:02d}{m:02d}.{number:05d}",
            version=1,
            title=base.titles[b],
            authors=base.authors[b],
            abstract=base.abstracts[b],
            categories=[primary],
            primary_category=primary,
            published=published,
            updated=published,
        )
        partner = int(rng.integers(len(base.counts)))
        plan.append(
            SynthPaper(
                meta=meta, base=b, partner=partner, n_chunks=count, weight=float(rng.uniform(0.55, 0.9))
            )
        )
        total += count
    return plan


def paper_vectors(base: Base, plan: list[SynthPaper], seed: int, noise: float = NOISE) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    bases = np.asarray([p.base for p in plan])
    partners = np.asarray([p.partner for p in plan])
    weights = np.asarray([p.weight for p in plan], np.float32)[:, None]
    jitter = rng.normal(0, noise, (len(plan), DIM)).astype(np.float32)
    mixed = weights * base.paper_vectors[bases] + (1 - weights) * base.paper_vectors[partners]
    return _unit(mixed + jitter).astype(np.float16)


def chunk_batches(
    base: Base, plan: list[SynthPaper], seed: int, batch_chunks: int = 50_000, noise: float = NOISE
) -> Iterator[tuple]:
    """Per batch of whole papers: (paper indexes, seq, base chunk, vectors float16 (n, 384)). A chunk
    mixes its real passage (and a little of the next one) with a random passage of its paper's
    partner, plus noise: 256 copies of a real passage would be near-ties that no index can order,
    which real corpora do not have."""
    rng = np.random.default_rng(seed + 2)
    i = 0
    while i < len(plan):
        j, size = i, 0
        while j < len(plan) and size < batch_chunks:
            size += plan[j].n_chunks
            j += 1
        owner = np.repeat(np.arange(i, j), [p.n_chunks for p in plan[i:j]])
        seq = np.concatenate([np.arange(p.n_chunks) for p in plan[i:j]])
        bases = np.asarray([p.base for p in plan[i:j]])[owner - i]
        first = base.starts[bases] + seq
        second = base.starts[bases] + np.minimum(seq + 1, base.counts[bases] - 1)
        partners = np.asarray([p.partner for p in plan[i:j]])[owner - i]
        other = base.starts[partners] + (rng.random(size) * base.counts[partners]).astype(np.int64)
        weights = np.asarray([p.weight for p in plan[i:j]], np.float32)[owner - i, None]
        weights = np.clip(weights + rng.normal(0, 0.05, (size, 1)).astype(np.float32), 0.5, 0.95)
        mix = rng.uniform(0.6, 1.0, (size, 1)).astype(np.float32)  # its passage and the next one
        own = mix * base.vectors[first] + (1 - mix) * base.vectors[second]
        jitter = rng.normal(0, noise, (size, DIM)).astype(np.float32)
        vectors = _unit(weights * own + (1 - weights) * base.vectors[other] + jitter).astype(np.float16)
        yield owner, seq, first, vectors
        i = j


def intrinsic_dimensionality(vectors: np.ndarray, k: int = 20) -> float:
    """Median local intrinsic dimensionality (Levina-Bickel MLE over each vector's k nearest
    neighbours): how hard a set is for an HNSW graph, which finds neighbours more easily in data
    that spreads over fewer dimensions."""
    x = _unit(vectors.astype(np.float32))
    k = min(k, len(x) - 1)
    dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * (x @ x.T)))
    dist = np.maximum(np.sort(dist, axis=1)[:, 1 : k + 1], 1e-9)  # column 0: the vector itself
    return float(np.median(-1.0 / np.mean(np.log(dist[:, :-1] / dist[:, -1:]), axis=1)))


def synthetic_sample(base: Base, n: int, seed: int, noise: float = NOISE) -> np.ndarray:
    plan = paper_plan(base, n, seed)
    return np.concatenate([vectors for _, _, _, vectors in chunk_batches(base, plan, seed, noise=noise)])


# ---- the truth, streamed --------------------------------------------------------------------------
@dataclass
class Truth:
    queries: np.ndarray  # (Q, 384) float32
    windows: dict[str, datetime]
    top: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # name -> (sims, rows)
    in_paper: list[int] = field(default_factory=list)  # query -> target paper
    in_paper_top: list[list[tuple[float, int]]] = field(default_factory=list)
    recent_best: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)  # window -> paper -> (Q,)

    def __post_init__(self) -> None:
        q = len(self.queries)
        for name in ("all", *self.windows):
            self.top[name] = (np.full((q, K), -2.0, np.float32), np.full((q, K), -1, np.int64))
        self.in_paper_top = [[] for _ in range(q)]
        self.recent_best = {name: {} for name in self.windows}

    def _merge(self, name: str, sims: np.ndarray, rows: np.ndarray) -> None:
        best_s, best_r = self.top[name]
        if sims.shape[1] > K:
            part = np.argpartition(-sims, K, axis=1)[:, :K]
            sims = np.take_along_axis(sims, part, 1)
            rows = rows[part]
        else:
            rows = np.broadcast_to(rows, sims.shape)
        all_s = np.concatenate([best_s, sims], 1)
        all_r = np.concatenate([best_r, rows], 1)
        order = np.argsort(-all_s, axis=1)[:, :K]
        self.top[name] = (np.take_along_axis(all_s, order, 1), np.take_along_axis(all_r, order, 1))

    def feed(self, first_row: int, owner: np.ndarray, vectors: np.ndarray, published: np.ndarray) -> None:
        sims = self.queries @ vectors.astype(np.float32).T  # what the database compares
        rows = np.arange(first_row, first_row + len(owner))
        self._merge("all", sims, rows)
        for name, since in self.windows.items():
            recent = published[owner] >= np.datetime64(since.replace(tzinfo=None))
            if recent.any():
                self._merge(name, sims[:, recent], rows[recent])
                ids, starts = np.unique(owner[recent], return_index=True)
                best = np.maximum.reduceat(sims[:, recent], starts, axis=1)
                for col, paper in enumerate(ids):
                    prior = self.recent_best[name].get(int(paper))
                    self.recent_best[name][int(paper)] = (
                        best[:, col] if prior is None else np.maximum(prior, best[:, col])
                    )
        for qi, target in enumerate(self.in_paper):
            mine = np.nonzero(owner == target)[0]
            for col in mine:
                self.in_paper_top[qi].append((float(sims[qi, col]), int(first_row + col)))


# ---- measuring ------------------------------------------------------------------------------------
def timed_clients(
    db: Database, clients: int, queries: list, run: Callable, ef: int
) -> tuple[list[float], list]:
    """Every client runs every query (its own shuffled order) on its own connection."""
    latencies: list[float] = []
    results: list = [None] * len(queries)
    lock = threading.Lock()

    def client(n: int) -> None:
        order = list(range(len(queries)))
        random.Random(n).shuffle(order)
        with db.connect(autocommit=True) as conn:
            conn.execute(f"SET hnsw.ef_search = {ef}")
            for i in order:
                t0 = time.perf_counter()
                out = run(conn, queries[i])
                took = time.perf_counter() - t0
                with lock:
                    latencies.append(took)
                    if n == 0:
                        results[i] = out

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatpapers-scale"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--increment", type=int, default=50_000, help="chunks of the nightly increment")
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--binary", action="store_true", help="also measure the binary-quantized index")
    parser.add_argument(
        "--layouts",
        action="store_true",
        help="also measure copies of the chunk vectors with the submission date beside them: one table"
        " (date filter by iterative scan) and partitioned by month (one HNSW index per month)",
    )
    parser.add_argument(
        "--layout-increment", type=int, default=20_000, help="chunks added to each layout copy (--layouts)"
    )
    parser.add_argument("--ef-search", default="40,64,100", help="hnsw.ef_search values for `search`")
    parser.add_argument("--reuse", action="store_true", help="measure a database loaded by an earlier run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--noise", type=float, default=NOISE, help="per-dimension noise of the synthetic vectors"
    )
    parser.add_argument("--base-pdfs", type=int, help="use only the first N real PDFs (smoke tests)")
    parser.add_argument(
        "--build-memory-mb", type=int, help="maintenance_work_mem of the index builds (default: the server's)"
    )
    parser.add_argument("--pg-settings", default="{}", help="server settings over the sized ones, JSON")
    parser.add_argument("--m", type=int, default=chunk_index.DEFAULT_M, help="HNSW links per node")
    parser.add_argument(
        "--ef-construction", type=int, default=chunk_index.DEFAULT_EF_CONSTRUCTION, help="HNSW build breadth"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    args.work.mkdir(parents=True, exist_ok=True)
    clients = [int(c) for c in args.clients.split(",")]

    embedder = Embedder(threads=2)
    base = build_base(args.work, embedder, args.base_pdfs)
    rng = random.Random(args.seed)
    query_texts = rng.sample(base.queries, min(args.queries, len(base.queries)))
    query_vectors = embedder.embed(query_texts)
    print(f"base: {len(base.vectors)} real chunks of {len(base.counts)} papers; {len(query_texts)} queries")
    sample = synthetic_sample(base, len(base.vectors), args.seed + 7, args.noise)
    print(
        "local intrinsic dimensionality (MLE, 20 neighbours; higher: harder for HNSW):"
        f" real chunks {intrinsic_dimensionality(base.vectors):.1f},"
        f" as many synthetic chunks {intrinsic_dimensionality(sample):.1f}"
    )

    plan = paper_plan(base, args.chunks, args.seed)
    published = np.asarray([p.meta.published.replace(tzinfo=None) for p in plan], dtype="datetime64[us]")
    windows = {"recent_2y": NEWEST.replace(year=NEWEST.year - 2), "recent_30d": NEWEST - timedelta(days=30)}
    truth = Truth(query_vectors, windows)
    by_base: dict[int, list[int]] = {}
    for i, p in enumerate(plan):
        by_base.setdefault(p.base, []).append(i)
    qrng = np.random.default_rng(args.seed + 5)
    for qv in query_vectors:  # the paper a question is about: one following the base paper it came from
        b = int(np.argmax(base.vectors @ qv))
        truth.in_paper.append(int(qrng.choice(by_base.get(int(base.paper_of[b]), [0]))))
    pvecs = paper_vectors(base, plan, args.seed, args.noise)
    row_paper = np.empty(args.chunks, np.int32)
    row_seq = np.empty(args.chunks, np.int32)

    sizing = sized_for(overrides=json.loads(args.pg_settings))
    admin = start_embedded(args.work / "pg", sizing)
    dbname = f"scale_{args.chunks}_{args.seed}_n{round(args.noise * 10_000)}"
    if not args.reuse:
        drop_database(admin, dbname)
    ensure_database(admin, dbname)
    settings = load_settings(
        env_file=None, database_url=make_conninfo(admin, dbname=dbname), data_dir=args.work
    )
    db = Database(settings)
    mwm = args.build_memory_mb or int(
        sizing["maintenance_work_mem"].removesuffix("MB").removesuffix("GB")
    ) * (1024 if sizing["maintenance_work_mem"].endswith("GB") else 1)
    print(f"server: {', '.join(f'{k}={v}' for k, v in sizing.items())}")
    print(f"machine: {psutil.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GiB RAM")

    # An earlier run's increment is not in the truth: measured with it, its chunks would count as
    # misses. Removed here; this run adds it again at the end.
    inc_plan = paper_plan(base, args.increment, args.seed + 100, newest=NEWEST + timedelta(days=1))
    today = NEWEST + timedelta(hours=12)

    def increment_id(i: int) -> str:
        return f"{today.year % 100:02d}{today.month:02d}.{90000 + i:05d}"

    for i, p in enumerate(inc_plan):
        p.meta.paper_id = increment_id(i)
        p.meta.published = p.meta.updated = today
    if args.reuse:
        with db.connect(autocommit=True) as conn:
            if chunk_index.index_parameters(conn) not in (None, (args.m, args.ef_construction)):
                # measured with other graph parameters: dropped before the VACUUM below, which
                # would otherwise repair a graph about to be replaced
                chunk_index.drop_chunk_index(conn)
            increment_ids = [increment_id(i) for i in range(10_000)]
            if removed := papers.delete_papers(conn, increment_ids):
                papers.analyze(conn, vacuum=True)
                print(f"removed an earlier run's increment ({removed} papers) before measuring")

    # ---- load ------------------------------------------------------------------------------------
    with db.connect(autocommit=True) as conn:
        loaded = papers.corpus_counts(conn)["chunks"] if args.reuse else 0
    load_s = build_s = 0.0
    gen_s = 0.0
    with db.connect(autocommit=True) as conn:
        if not loaded:
            chunk_index.drop_chunk_index(conn)
            t0 = time.perf_counter()
            with conn.transaction():
                papers.copy_papers(
                    conn,
                    (
                        papers.BulkPaper(
                            meta=p.meta,
                            title=p.meta.title or "",
                            source="arxiv",
                            n_chunks=p.n_chunks,
                            vector=v,
                        )
                        for p, v in zip(plan, pvecs, strict=True)
                    ),
                )
            load_s += time.perf_counter() - t0
        row = 0
        for owner, seq, first, vectors in chunk_batches(base, plan, args.seed, noise=args.noise):
            g0 = time.perf_counter()
            truth.feed(row, owner, vectors, published)
            row_paper[row : row + len(owner)] = owner
            row_seq[row : row + len(owner)] = seq
            gen_s += time.perf_counter() - g0
            if not loaded:
                t0 = time.perf_counter()
                with conn.transaction():
                    papers.copy_chunks(
                        conn,
                        (
                            (plan[o].meta.paper_id, int(s), None, None, base.texts_z[f], v)
                            for o, s, f, v in zip(
                                owner.tolist(), seq.tolist(), first.tolist(), vectors, strict=True
                            )
                        ),
                    )
                load_s += time.perf_counter() - t0
            row += len(owner)
            print(f"\r  {row:,} / {args.chunks:,} chunks", end="", flush=True)
        print()
        if not loaded:
            t0 = time.perf_counter()
            papers.fill_lexical_index(conn)
            papers.analyze(conn)
            lex_s = time.perf_counter() - t0
            print(
                f"load (binary COPY): {load_s:.1f} s = {args.chunks / load_s:,.0f} chunks/s; "
                f"lexical index + ANALYZE {lex_s:.1f} s; generation + truth {gen_s:.1f} s (not counted)"
            )
        built = False
        if not chunk_index.chunk_index_exists(conn):  # also a reused corpus whose build was cut short
            build_s = chunk_index.build_chunk_index(conn, mwm, m=args.m, ef_construction=args.ef_construction)
            built = True
            print(
                f"HNSW build (halfvec, m={args.m}, ef_construction={args.ef_construction}): {build_s:.1f} s"
                f" with maintenance_work_mem={mwm}MB",
                flush=True,
            )
        if args.binary and chunk_index.BINARY_INDEX not in chunk_index.index_bytes(conn):
            bin_s = chunk_index.build_chunk_index(conn, mwm, binary=True)
            built = True
            print(f"HNSW build (binary quantized, bit(384) Hamming): {bin_s:.1f} s", flush=True)
        if built:
            papers.analyze(conn, vacuum=True)
        counts = papers.corpus_counts(conn)
        sizes = papers.storage_bytes(conn)
        indexes = chunk_index.index_bytes(conn)
        graph = chunk_index.index_parameters(conn)
    n = counts["chunks"]
    hnsw = indexes.get(chunk_index.CHUNK_INDEX, 0)
    binary = indexes.get(chunk_index.BINARY_INDEX, 0)
    other_idx = sizes["chunks_indexes"] - hnsw - binary
    print(f"corpus: {counts['papers']:,} papers, {n:,} chunks")
    print("chunk index built with m={}, ef_construction={}".format(*graph))
    print(
        f"chunks table (heap + TOAST): {sizes['chunks_table'] / 2**30:.2f} GiB"
        f" = {sizes['chunks_table'] / n:,.0f} B/chunk"
    )
    print(
        f"HNSW index: {hnsw / 2**30:.2f} GiB = {hnsw / n:,.0f} B/chunk;"
        f" primary key {other_idx / n:,.0f} B/chunk"
    )
    if binary:
        print(f"binary HNSW index: {binary / 2**30:.2f} GiB = {binary / n:,.0f} B/chunk")
    per_chunk = (sizes["chunks_table"] + sizes["chunks_indexes"] - binary) / n
    papers_share = (sizes["papers_table"] + sizes["papers_indexes"]) / n
    print(
        f"storage per chunk incl. indexes: {per_chunk:,.0f} B"
        f" (+ papers table and indexes {papers_share:,.0f} B)"
    )
    print(f"RAM to keep the index cached: {hnsw / 2**30:.2f} GiB (+ heap pages read by results)")

    # ---- queries ---------------------------------------------------------------------------------
    ids = [(plan[int(p)].meta.paper_id, int(s)) for p, s in zip(row_paper, row_seq, strict=True)]

    def truth_of(name: str) -> list[set]:
        return [{ids[r] for r in rows if r >= 0} for rows in truth.top[name][1]]

    def recall(found: list, want: list[set]) -> float:
        hits = [len(set(f) & w) / max(1, len(w)) for f, w in zip(found, want, strict=True) if w]
        return float(np.mean(hits)) if hits else float("nan")

    true_kth = truth.top["all"][0][:, K - 1]  # cosine similarity of each query's true 10th neighbour

    def near_miss(found_scores: list[list[float]]) -> tuple[float, float]:
        """ann-benchmarks' recall (a result counts when it is as close as the true 10th neighbour,
        within 1e-3), and the mean cosine gap between the 10th result and the true 10th: the
        synthetic corpus has near-ties a strict recall counts as misses."""
        counted, gaps = [], []
        for qi, scores in enumerate(found_scores):
            if scores:
                counted.append(sum(1 for x in scores if x >= true_kth[qi] - 1e-3) / K)
                gaps.append(float(true_kth[qi]) - min(scores))
        return float(np.mean(counted)), float(np.mean(gaps))

    def share_in(found: list, want: list[set]) -> float:
        hits = [len(set(f) & w) / len(f) for f, w in zip(found, want, strict=True) if f]
        return float(np.mean(hits)) if hits else float("nan")

    qs = list(range(len(query_vectors)))
    ef_default = settings.hnsw_ef_search

    def measure(
        label: str,
        run: Callable,
        want: list[set] | None = None,
        fill: int | None = None,
        ef: int = ef_default,
        precision: bool = False,
    ) -> None:
        with db.connect(autocommit=True) as conn:  # warm the cache: the figures are of a cached index
            conn.execute(f"SET hnsw.ef_search = {ef}")
            for q in qs[: min(20, len(qs))]:
                run(conn, q)
        for c in clients:
            lat, results = timed_clients(db, c, qs, run, ef)
            line = (
                f"{label:<46} {c:>2} client(s): p50 {pct(lat, 50) * 1000:6.1f} ms"
                f"  p95 {pct(lat, 95) * 1000:6.1f} ms"
            )
            if c == clients[0]:
                if want is not None and precision:
                    line += f"  in the true top {len(want[0])}: {share_in(results, want):.3f}"
                elif want is not None and results and results[0] and len(results[0][0]) == 3:
                    ids = [[(p, s) for p, s, _ in r] for r in results]
                    eps_recall, gap = near_miss([[x for _, _, x in r] for r in results])
                    line += f"  recall {recall(ids, want):.3f}"
                    line += f" (within 1e-3: {eps_recall:.3f}; 10th gap {gap:.4f})"
                elif want is not None:
                    line += f"  recall {recall(results, want):.3f}"
                if fill is not None:  # k, or every paper there is when the window holds fewer
                    full = sum(1 for r in results if len(r) >= fill) / len(results)
                    line += f"  returned {fill}: {full:.0%} of queries"
            print(line, flush=True)

    want_all = truth_of("all")
    for ef in [int(e) for e in args.ef_search.split(",")]:

        def ann(conn, q):
            return [(h.paper_id, h.seq, h.score) for h in papers.search_chunks(conn, query_vectors[q], k=K)]

        measure(f"search: chunk ANN, ef_search={ef}", ann, want_all, ef=ef)
    if binary:
        for cand in (40, 100, 200):

            def bq(conn, q, cand=cand):
                hits = papers.search_chunks_binary(conn, query_vectors[q], k=K, candidates=cand)
                return [(p, s, 1.0 - d) for p, s, d in hits]

            measure(f"search: binary index, re-rank {cand}", bq, want_all, ef=max(64, cand))

    def tool_search(conn, q):
        hits = papers.related_papers(conn, query_vectors[q], k=5, lexical_text=query_texts[q])
        return [p.paper_id for p, _ in hits]

    measure("search tool: hybrid related_papers (k=5)", tool_search)

    for name, since in windows.items():
        best = truth.recent_best[name]
        pids = list(best)
        want_recent: list[set] = []
        if pids:
            chunk_best = np.stack([best[p] for p in pids], 1)  # (Q, papers)
            pv = query_vectors @ pvecs[pids].astype(np.float32).T
            rel = np.maximum(chunk_best, pv)
            for qi in range(len(qs)):
                top = np.argsort(-rel[qi])[:15]  # the tool shows the newest 5 of the 15 most relevant
                want_recent.append({plan[pids[t]].meta.paper_id for t in top})

        def recent(conn, q, since=since):
            return [p.paper_id for p, _ in papers.related_papers(conn, query_vectors[q], k=5, since=since)]

        def recent_hybrid(conn, q, since=since):
            hits = papers.related_papers(
                conn, query_vectors[q], k=5, since=since, lexical_text=query_texts[q]
            )
            return [p.paper_id for p, _ in hits]

        in_window = published >= np.datetime64(since.replace(tzinfo=None))
        share = float(in_window.mean())
        k_recent = min(5, int(in_window.sum()))
        measure(
            f"get_recent_papers {name} ({share:.1%} of papers), dense",
            recent,
            want_recent or None,
            fill=k_recent,
            precision=True,
        )
        measure(f"get_recent_papers {name}, hybrid (the tool)", recent_hybrid, fill=k_recent)

        def post_filtered(conn, q, since=since):
            # What the tool did before: the unfiltered pool ranked, its recent papers kept, the newest
            # 5 of the 15 most relevant of them shown.
            pool = papers.related_papers(conn, query_vectors[q], k=1000)
            top = [p for p, _ in pool if p.published and p.published >= since][:15]
            return [p.paper_id for p in sorted(top, key=lambda p: p.published, reverse=True)][:5]

        measure(
            "  before: unfiltered pool then date filter",
            post_filtered,
            want_recent or None,
            k_recent,
            precision=True,
        )

    targets = [plan[t].meta.paper_id for t in truth.in_paper]
    want_paper = [{ids[r] for _, r in sorted(top, reverse=True)[:5]} for top in truth.in_paper_top]

    def in_paper(conn, q):
        return [
            (h.paper_id, h.seq)
            for h in papers.search_chunks(conn, query_vectors[q], k=5, paper_id=targets[q])
        ]

    measure("get_information_from_paper (k=5 in one paper)", in_paper, want_paper)
    neighbours = [ids[int(truth.top["all"][1][q][0])] for q in qs]

    def prior_next(conn, q):
        pid, seq = neighbours[q]
        return [papers.get_chunk(conn, pid, seq - 1), papers.get_chunk(conn, pid, seq + 1)]

    measure("get_prior_context + get_subsequent_context", prior_next)

    # ---- other layouts: the date beside each vector, in one table or a partition per month -------
    if args.layouts:
        with db.connect(autocommit=True) as conn:
            months = chunk_layouts.create_layouts(conn, date(FIRST_YEAR, 1, 1), today.date())
            for table in chunk_layouts.LAYOUTS:
                t0 = time.perf_counter()
                rows = chunk_layouts.copy_from_chunks(conn, table)
                copy_s = time.perf_counter() - t0
                took = chunk_layouts.build_index(conn, table, args.m, args.ef_construction, mwm)
                heap, idx = chunk_layouts.table_bytes(conn, table)
                print(
                    f"layout {table}: {rows:,} rows copied in {copy_s:.1f} s; HNSW build {took:.1f} s;"
                    f" heap {heap / rows:,.0f} B/chunk, indexes {idx / rows:,.0f} B/chunk"
                    + (f" ({months} month partitions)" if table == chunk_layouts.BY_MONTH else ""),
                    flush=True,
                )
            conn.execute("VACUUM ANALYZE")
        for table in chunk_layouts.LAYOUTS:
            for ef in [int(e) for e in args.ef_search.split(",")]:

                def layout_all(conn, q, table=table):
                    return chunk_layouts.nearest(conn, table, query_vectors[q], K)

                measure(f"{table}: no date filter, ef_search={ef}", layout_all, want_all, ef=ef)
            for name, since in windows.items():

                def layout_since(conn, q, table=table, since=since):
                    return [
                        (p, s) for p, s, _ in chunk_layouts.nearest(conn, table, query_vectors[q], K, since)
                    ]

                in_window = sum(p.n_chunks for p in plan if p.meta.published >= since)
                measure(f"{table}: {name} chunks", layout_since, truth_of(name), fill=min(K, in_window))
        if args.layout_increment:
            layout_plan = paper_plan(base, args.layout_increment, args.seed + 200, newest=today)
            batches = list(chunk_batches(base, layout_plan, args.seed + 200, noise=args.noise))
            with db.connect(autocommit=True) as conn:
                for table in chunk_layouts.LAYOUTS:
                    t0 = time.perf_counter()
                    for owner, _, _, vectors in batches:
                        for o in np.unique(owner):
                            with conn.transaction():  # one paper a transaction, as ingest writes
                                chunk_layouts.add_paper_chunks(
                                    conn,
                                    table,
                                    f"layout.{int(o):05d}",
                                    today,
                                    vectors[owner == o].astype(np.float32),
                                )
                    took = time.perf_counter() - t0
                    rate = args.layout_increment / took
                    print(
                        f"layout {table}: increment of {args.layout_increment:,} chunks dated today, one"
                        f" transaction per paper: {took:.1f} s = {rate:,.0f} chunks/s",
                        flush=True,
                    )
        with db.connect(autocommit=True) as conn:
            chunk_layouts.drop_layouts(conn)

    # ---- the nightly increment ---------------------------------------------------------------------
    if args.increment:
        inc_vectors = paper_vectors(base, inc_plan, args.seed + 100, args.noise)
        t0 = time.perf_counter()
        done = 0
        with db.connect(autocommit=True) as conn:
            batches = chunk_batches(base, inc_plan, args.seed + 100, noise=args.noise)
            for owner, seq, first, vectors in batches:
                for o in np.unique(owner):
                    mine = np.nonzero(owner == o)[0]
                    p = inc_plan[int(o)]
                    with conn.transaction():  # as ingest writes a paper: one transaction
                        papers.replace_paper(
                            conn,
                            p.meta,
                            title=p.meta.title or "",
                            source="arxiv",
                            source_sha256=None,
                            n_pages=None,
                            paper_vector=inc_vectors[int(o)].astype(np.float32),
                            chunks=[
                                ChunkRecord(
                                    seq=int(seq[c]), text=papers.unpack_text(base.texts_z[int(first[c])])
                                )
                                for c in mine
                            ],
                            chunk_vectors=vectors[mine].astype(np.float32),
                        )
                    done += len(mine)
                print(f"\r  increment: {done:,} / {args.increment:,} chunks", end="", flush=True)
        took = time.perf_counter() - t0
        print()
        line = (
            f"nightly increment: {args.increment:,} chunks ({len(inc_plan)} papers) into the indexed "
            f"corpus, one transaction per paper: {took:.1f} s = {args.increment / took:,.0f} chunks/s"
        )
        print(line)
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
