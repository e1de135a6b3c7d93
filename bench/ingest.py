"""Ingest benchmark: prints its figures, measured side by side in one run (not a timed test).

    python bench/ingest.py [--pdf-dir ../shared/corpus/pdfs] [--limit N] [--skip-naive]

1. end-to-end chunks/s of the ingest pipeline (`chatpapers ingest --pdf-dir`, model already loaded)
2. embedder-only chunks/s on exactly the texts the pipeline embedded, and the ratio of the two;
   the same with batches of 32 texts, and whether a paper's vectors are the same embedded alone
   and together with other papers' texts (at the default batch size and at 32)
3. a naive LangChain pipeline on the same files (PyPDFLoader + RecursiveCharacterTextSplitter +
   HuggingFaceEmbeddings + langchain-postgres PGVector.add_documents)
4. the time of a second run on the unchanged corpus
5. storage bytes per chunk (chunks table + TOAST + indexes)
6. chunk search p50/p95 and recall@10 against exact search, 200 queries (first sentences of chunks)
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.figures import pct, write_figures
from bench.scratch import scratch_services
from corpus import papers
from corpus.db import Database, ensure_database
from corpus.embedder import Embedder, model_path
from corpus.migrations import enable_pgvector
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items

ROOT = Path(__file__).resolve().parents[1]


def naive_langchain(files: list[Path], url: str) -> tuple[int, float]:
    """The pipeline a tutorial would write: sequential, one library call per step."""
    from langchain_community.document_loaders import PyPDFLoader
    from langchain_huggingface import HuggingFaceEmbeddings
    from langchain_postgres import PGVector
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    started = time.perf_counter()
    embeddings = HuggingFaceEmbeddings(model_name=model_path(), encode_kwargs={"normalize_embeddings": True})
    sqlalchemy_url = "postgresql+psycopg://" + url.split("://", 1)[1] if "://" in url else None
    if sqlalchemy_url is None:  # key=value conninfo -> URL with a socket host
        parts = dict(p.split("=", 1) for p in url.split())
        sqlalchemy_url = (
            f"postgresql+psycopg://{parts.get('user', 'postgres')}@/{parts['dbname']}?host={parts['host']}"
        )
    store = PGVector(
        embeddings=embeddings, connection=sqlalchemy_url, collection_name="naive", use_jsonb=True
    )
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=0)
    embeddings.embed_query("warm up the model")  # model load is not counted, as for our pipeline
    started = time.perf_counter()
    total = 0
    for f in files:
        docs = PyPDFLoader(str(f)).load()
        for doc in docs:  # PostgreSQL text cannot hold NUL; without this the naive pipeline crashes
            doc.page_content = doc.page_content.replace("\x00", "")
        chunks = splitter.split_documents(docs)
        if chunks:
            store.add_documents(chunks)
        total += len(chunks)
    return total, time.perf_counter() - started


def search_figures(db: Database, embedder: Embedder, n_queries: int = 200, k: int = 10) -> dict:
    with db.connect(autocommit=True) as conn:
        all_texts = [text for _, _, text in papers.chunk_texts(conn)]
        rng = random.Random(7)
        sample = rng.sample(all_texts, min(n_queries, len(all_texts)))
        queries = [re.split(r"(?<=[.!?])\s", t, maxsplit=1)[0][:300] for t in sample]
        vectors = embedder.embed(queries)
        latencies, recalls = [], []
        for vec in vectors:
            started = time.perf_counter()
            hits = papers.search_chunks(conn, vec, k=k)
            latencies.append((time.perf_counter() - started) * 1000)
            exact = papers.exact_nearest_chunks(conn, vec, k)
            got = {(h.paper_id, h.seq) for h in hits}
            recalls.append(len(got & set(exact)) / len(exact))
    return {
        "queries": len(queries),
        "search_p50_ms": pct(latencies, 50),
        "search_p95_ms": pct(latencies, 95),
        "recall_at_10": float(np.mean(recalls)),
        "ef_search": db.settings.hnsw_ef_search,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, default=ROOT.parent / "shared/corpus/pdfs")
    parser.add_argument("--metadata", type=Path, default=ROOT.parent / "shared/corpus/metadata.jsonl")
    parser.add_argument("--limit", type=int, default=None, help="only the first N PDFs (quick look)")
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out")
    args = parser.parse_args()

    services, admin = scratch_services("chatpapers-bench-")
    settings, db, embedder = services.settings, services.db, services.embedder
    work = settings.data_dir
    embedder.embed(["warm up the model"])

    files = sorted(args.pdf_dir.glob("*.pdf"))[: args.limit]
    folder = work / "pdfs"
    folder.mkdir()
    for f in files:
        (folder / f.name).symlink_to(f.resolve())
    figures: dict = {"papers": len(files), "date": datetime.now(UTC).isoformat(timespec="seconds")}

    print(f"[1/6] ingest pipeline on {len(files)} PDFs ...", flush=True)
    before = embedder.texts_embedded
    report = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, args.metadata))
    embedded = embedder.texts_embedded - before
    figures.update(
        chunks=report.chunks,
        texts_embedded=embedded,
        e2e_seconds=report.seconds,
        e2e_chunks_per_s=report.chunks / report.seconds,
        failed=len(report.failed),
    )

    print("[2/6] embedder only, same texts ...", flush=True)
    with db.connect() as conn:
        texts = [text for _, _, text in papers.chunk_texts(conn)]
        by_paper = papers.chunk_counts(conn)
    # every chunk in one encode call (with batches, sorted by length across the whole corpus)
    started = time.perf_counter()
    together = embedder.embed(texts)
    embed_seconds = time.perf_counter() - started
    figures.update(embed_only_seconds=embed_seconds, embed_only_chunks_per_s=len(texts) / embed_seconds)
    figures["e2e_over_embed_only"] = figures["e2e_chunks_per_s"] / figures["embed_only_chunks_per_s"]
    # the pipeline's own batching: one call per paper (its title+abstract and its chunks)
    started = time.perf_counter()
    offset = 0
    for _, n in by_paper:
        embedder.embed(["paper title and abstract", *texts[offset : offset + n]])
        offset += n
    per_paper = len(texts) / (time.perf_counter() - started)
    figures.update(
        embed_only_per_paper_chunks_per_s=per_paper,
        e2e_over_per_paper=figures["e2e_chunks_per_s"] / per_paper,
    )
    # batches of 32 (the default before) on the same texts, and whether a text's vector depends on
    # the texts embedded with it (ingest groups whatever papers are extracted at that moment)
    batched = Embedder(batch_size=32, threads=embedder.threads)
    batched.embed(["warm up the model"])
    started = time.perf_counter()
    together_32 = batched.embed(texts)
    batched_per_s = len(texts) / (time.perf_counter() - started)
    first = by_paper[0][1] if by_paper else 0  # the first paper's chunks: alone, and among all
    figures.update(
        embed_batch_size=embedder.batch_size,
        embed_only_batch32_chunks_per_s=batched_per_s,
        embed_only_over_batch32=figures["embed_only_chunks_per_s"] / batched_per_s,
        vectors_alone_equal_in_group=bool(np.array_equal(embedder.embed(texts[:first]), together[:first])),
        vectors_alone_equal_in_group_batch32=bool(
            np.array_equal(batched.embed(texts[:first]), together_32[:first])
        ),
    )

    print("[3/6] second run, unchanged corpus ...", flush=True)
    again = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, args.metadata))
    figures.update(
        second_run_seconds=again.seconds,
        second_run_new=again.new,
        first_over_second=report.seconds / again.seconds,
    )

    print("[4/6] storage ...", flush=True)
    with db.connect() as conn:
        sizes = papers.storage_bytes(conn)
    figures.update(sizes)
    figures["bytes_per_chunk"] = (sizes["chunks_table"] + sizes["chunks_indexes"]) / report.chunks
    figures["bytes_per_chunk_incl_papers"] = (
        sizes["chunks_table"] + sizes["chunks_indexes"] + sizes["papers_table"] + sizes["papers_indexes"]
    ) / report.chunks

    print("[5/6] search latency and recall ...", flush=True)
    figures.update(search_figures(db, embedder))

    if not args.skip_naive:
        print("[6/6] naive LangChain pipeline ...", flush=True)
        ensure_database(admin, "naive")
        with psycopg.connect(make_conninfo(admin, dbname="naive"), autocommit=True) as conn:
            enable_pgvector(conn)
        n, seconds = naive_langchain(files, make_conninfo(admin, dbname="naive"))
        figures.update(
            naive_chunks=n,
            naive_seconds=seconds,
            naive_chunks_per_s=n / seconds,
            e2e_over_naive=figures["e2e_chunks_per_s"] / (n / seconds),
        )

    write_figures(args.out, "ingest", figures, width=32)


if __name__ == "__main__":
    main()
