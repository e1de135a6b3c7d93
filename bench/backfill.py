"""Bulk backfill benchmark: prints its figures, measured side by side in one run (not a timed test).

    python bench/backfill.py [--limit 12] [--base-chunks 20000] [--load-chunks 20000]
                             [--skip-engines] [--skip-index] [--embed-threads N] [--embed-cpus X]
                             [--embed-actors N]

1. engines: the ingest pipeline in-process and on Ray (a local cluster of 2 CPUs: extraction tasks,
   an embedding actor) on the same PDFs, each into a fresh database; chunks/s of each (models
   loaded beforehand, the Ray cluster's start timed apart) and their ratio
2. chunk index: the same papers (chunks and vectors made once from real PDFs, repeated with a
   little noise on the vectors up to --load-chunks) written into two copies of a corpus that
   already holds --base-chunks chunks, one transaction per paper as the pipeline writes them:
   with the HNSW index updated row by row, and with the index dropped before and built after
   (what a bulk run does); seconds and chunks/s of each, the build's share
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.figures import write_figures
from bench.scratch import scratch_services
from corpus import chunk_index, papers
from corpus.db import Database, ensure_database
from corpus.embedder import Embedder
from corpus.models import ChunkRecord, PaperMeta
from ground.settings import Settings
from ingest.pipeline import IngestPipeline, paper_text
from ingest.prepare import prepare_pdf
from ingest.sources import pdf_dir_items

ROOT = Path(__file__).resolve().parents[1]


def _database(settings: Settings, admin: str, name: str, template: str | None = None) -> Database:
    ensure_database(admin, name, template=template)
    return Database(settings.model_copy(update={"database_url": make_conninfo(admin, dbname=name)}))


def engines(
    settings: Settings, admin: str, embedder: Embedder, folder: Path, metadata: Path, args: argparse.Namespace
) -> dict:
    from ingest.ray_engine import RayIngestPipeline

    figures: dict = {}
    print("[1/2] in-process pipeline ...", flush=True)
    local = IngestPipeline(settings, _database(settings, admin, "engine_inprocess"), embedder).run(
        pdf_dir_items(folder, metadata)
    )
    figures.update(
        inprocess_chunks=local.chunks,
        inprocess_seconds=local.seconds,
        inprocess_chunks_per_s=local.chunks / local.seconds,
    )
    print("[1/2] Ray pipeline (local cluster, 2 CPUs) ...", flush=True)
    db = _database(settings, admin, "engine_ray")
    started = time.perf_counter()
    with RayIngestPipeline(
        settings,
        db,
        embedder,
        num_cpus=2,
        embed_threads=args.embed_threads,
        embed_cpus=args.embed_cpus,
        embed_actors=args.embed_actors,
    ) as pipeline:
        figures["ray_start_seconds"] = time.perf_counter() - started  # cluster + actor + model
        remote = pipeline.run(pdf_dir_items(folder, metadata))
    figures.update(
        ray_chunks=remote.chunks,
        ray_seconds=remote.seconds,
        ray_chunks_per_s=remote.chunks / remote.seconds,
        ray_embed_threads=pipeline.embed_threads,
        ray_embed_cpus=pipeline.embed_cpus,
        ray_embed_actors=pipeline.embed_actors,
    )
    figures["ray_over_inprocess"] = figures["ray_chunks_per_s"] / figures["inprocess_chunks_per_s"]
    return figures


def _templates(files: list[Path], settings: Settings, embedder: Embedder) -> list[tuple[list, np.ndarray]]:
    """(chunks, [paper vector, chunk vectors...]) of real papers, extracted and embedded once."""
    out = []
    for f in files:
        prepared = prepare_pdf(f.read_bytes(), settings.chunk_size, settings.chunk_overlap)
        if prepared.status != "ok":
            continue
        texts = [paper_text(prepared.title_guess or f.stem, None, prepared.chunks[0].text)]
        out.append((prepared.chunks, embedder.embed(texts + [c.text for c in prepared.chunks])))
    return out


def _papers(templates: list[tuple[list, np.ndarray]], start: int, chunks: int, rng: np.random.Generator):
    """Papers numbered from `start` until `chunks` chunks: real texts, their vectors moved a little
    (each paper its own points, spread as real ones are)."""
    total, i = 0, start
    while total < chunks:
        records, vectors = templates[i % len(templates)]
        noisy = vectors + rng.normal(0, 0.02, vectors.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        meta = PaperMeta(paper_id=f"bench.{i:06d}", version=1, title=f"bench paper {i}")
        yield meta, records, noisy
        total += len(records)
        i += 1


def _write(db: Database, batch: list[tuple[PaperMeta, list[ChunkRecord], np.ndarray]]) -> int:
    with db.connect(autocommit=True) as conn:
        for meta, records, vectors in batch:
            with conn.transaction():  # one per paper, as the pipeline writes
                papers.replace_paper(
                    conn,
                    meta,
                    title=meta.title or "",
                    source="bench",
                    source_sha256=None,
                    n_pages=None,
                    paper_vector=vectors[0],
                    chunks=records,
                    chunk_vectors=vectors[1:],
                )
    return sum(len(r) for _, r, _ in batch)


def index(
    settings: Settings, admin: str, embedder: Embedder, files: list[Path], args: argparse.Namespace
) -> dict:
    print(f"[2/2] chunk index: a corpus of {args.base_chunks} chunks ...", flush=True)
    templates = _templates(files, settings, embedder)
    rng = np.random.default_rng(7)
    base_papers = list(_papers(templates, 0, args.base_chunks, rng))
    load = list(_papers(templates, len(base_papers), args.load_chunks, rng))
    base = _database(settings, admin, "index_base")
    _ = base.url  # migrated
    with base.connect(autocommit=True) as conn:
        chunk_index.drop_chunk_index(conn)
    stored = _write(base, base_papers)
    with base.connect(autocommit=True) as conn:
        base_build = chunk_index.build_chunk_index(
            conn,
            settings.index_build_memory_mb,
            m=settings.index_m,
            ef_construction=settings.index_ef_construction,
        )
    base.close()
    figures: dict = {"base_chunks": stored, "base_build_seconds": base_build}

    print(f"[2/2] loading {args.load_chunks} chunks, index updated row by row ...", flush=True)
    rows = _database(settings, admin, "index_rows", template="index_base")
    started = time.perf_counter()
    loaded = _write(rows, load)
    figures.update(load_chunks=loaded, rows_seconds=time.perf_counter() - started)

    print(f"[2/2] loading {args.load_chunks} chunks, index dropped and built after ...", flush=True)
    bulk = _database(settings, admin, "index_bulk", template="index_base")
    started = time.perf_counter()
    with bulk.connect(autocommit=True) as conn:
        chunk_index.drop_chunk_index(conn)
    _write(bulk, load)
    with bulk.connect(autocommit=True) as conn:
        build = chunk_index.build_chunk_index(
            conn,
            settings.index_build_memory_mb,
            m=settings.index_m,
            ef_construction=settings.index_ef_construction,
        )
    figures.update(bulk_seconds=time.perf_counter() - started, bulk_build_seconds=build)
    figures.update(
        rows_chunks_per_s=loaded / figures["rows_seconds"],
        bulk_chunks_per_s=loaded / figures["bulk_seconds"],
        bulk_speedup=figures["rows_seconds"] / figures["bulk_seconds"],
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, default=ROOT.parent / "shared/corpus/pdfs")
    parser.add_argument("--metadata", type=Path, default=ROOT.parent / "shared/corpus/metadata.jsonl")
    parser.add_argument("--limit", type=int, default=12, help="the first N PDFs (default 12)")
    parser.add_argument("--base-chunks", type=int, default=20_000, help="chunks stored before the load")
    parser.add_argument("--load-chunks", type=int, default=20_000, help="chunks the load adds")
    parser.add_argument("--skip-engines", action="store_true")
    parser.add_argument("--skip-index", action="store_true")
    parser.add_argument("--embed-threads", type=int, default=None, help="torch threads of the Ray actor")
    parser.add_argument("--embed-cpus", type=float, default=0.0, help="CPUs the Ray actor reserves")
    parser.add_argument("--embed-actors", type=int, help="Ray embedding actors (default: one per GPU)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out")
    args = parser.parse_args()

    services, admin = scratch_services("chatpapers-backfill-")
    settings, embedder = services.settings, services.embedder
    embedder.embed(["warm up the model"])
    files = sorted(args.pdf_dir.glob("*.pdf"))[: args.limit]
    folder = settings.data_dir / "pdfs"
    folder.mkdir()
    for f in files:
        (folder / f.name).symlink_to(f.resolve())
    figures: dict = {"papers": len(files), "date": datetime.now(UTC).isoformat(timespec="seconds")}
    if not args.skip_engines:
        figures.update(engines(settings, admin, embedder, folder, args.metadata, args))
    if not args.skip_index:
        figures.update(index(settings, admin, embedder, files, args))

    write_figures(args.out, "backfill", figures, width=28)


if __name__ == "__main__":
    main()
