"""Bulk loads: whether a run adds enough of the corpus to load without the chunk index and build
it once at the end, and the drop / load / build sequence that is safe to interrupt.

Updating the HNSW graph row by row costs more per chunk than building it once from all rows, so a
run that adds a large share of the corpus drops the index first. Searches stay correct without
it (exact scans, only slower); the build runs in a `finally`, and should even that be cut short,
the next ingest run builds the missing index before it loads anything row by row."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sized

from pydantic import BaseModel

from corpus import chunk_index, ingest_state, papers
from corpus.db import Database
from ground.settings import Settings
from ingest.skips import skip_reason
from ingest.sources import WorkItem

_DROP_WAIT_SECONDS = 5.0  # a search holding the index longer keeps it: the run loads row by row
# Chunks per paper assumed before the corpus holds any (arXiv CS papers average 60-80).
_DEFAULT_CHUNKS_PER_PAPER = 60


class IndexPlan(BaseModel):
    """What a run does with the chunk index, and the figures it decided from."""

    pending: int  # papers the run will (probably) add or replace
    stored_papers: int
    stored_chunks: int
    expected_chunks: int
    rebuild: bool  # drop before loading, build after
    built_missing_seconds: float | None = None  # the index was missing at the start and built then
    build_seconds: float | None = None  # the build after loading


def pending_count(conn, items: Iterable[WorkItem], max_new: int | None, force: bool) -> int:
    """How many items the skip check will let through, by the check the pipeline itself runs
    (without the file hashes, which are not read yet: a changed file of a stored version counts
    as stored here)."""
    items = list(items)
    known = {i.meta.paper_id for i in items if i.meta.paper_id}
    states = ingest_state.get_items(conn, sorted(known)) if known and not force else {}
    pending = sum(
        1
        for i in items
        if force
        or not i.meta.paper_id
        or skip_reason(states.get(i.meta.paper_id), i.meta.version, None) is None
    )
    return pending if max_new is None else min(pending, max_new)


def plan_index(
    conn, settings: Settings, items: Iterable[WorkItem] | None, max_new: int | None, force: bool = False
) -> IndexPlan:
    """Decide from the work known up front; a source of unknown length (the arXiv feed) is
    loaded row by row."""
    stored_chunks = chunk_index.chunk_count(conn)
    if stored_chunks < 0:  # never analysed (a young table): count it
        stored_chunks = papers.corpus_counts(conn)["chunks"]
    stored_papers = papers.count_papers_with_chunks(conn)
    if items is None or not isinstance(items, Sized):
        return IndexPlan(
            pending=0,
            stored_papers=stored_papers,
            stored_chunks=stored_chunks,
            expected_chunks=0,
            rebuild=False,
        )
    pending = pending_count(conn, items, max_new, force)
    per_paper = (
        stored_chunks / stored_papers if stored_papers and stored_chunks > 0 else _DEFAULT_CHUNKS_PER_PAPER
    )
    expected = round(pending * per_paper)
    rebuild = (
        pending >= settings.bulk_index_min_papers
        and expected > settings.bulk_index_rebuild_ratio * stored_chunks
    )
    return IndexPlan(
        pending=pending,
        stored_papers=stored_papers,
        stored_chunks=stored_chunks,
        expected_chunks=expected,
        rebuild=rebuild,
    )


@contextlib.contextmanager
def chunk_index_for_run(
    db: Database,
    settings: Settings,
    items: Iterable[WorkItem] | None,
    max_new: int | None = None,
    force: bool = False,
    notify: Callable[[str], None] | None = None,
) -> Iterator[IndexPlan]:
    """Around a run's loading: drop the chunk index for a bulk load and build it afterwards (also
    when the load fails or is interrupted); for any other run, build a missing index first."""
    say = notify or (lambda _msg: None)
    guard = db.connect(autocommit=True)  # its session holds the index-work lock while it is open
    try:
        claimed = chunk_index.claim_index_work(guard)
        with db.connect(autocommit=True) as conn:
            plan = plan_index(conn, settings, items, max_new, force)
            exists = chunk_index.chunk_index_exists(conn)
            if not claimed:
                plan.rebuild = False
                if not exists:
                    say(
                        "the chunk index is missing and another ingest run or index build is under way: "
                        "it builds the index when it ends; this run loads beside it"
                    )
            elif plan.rebuild:
                if exists:
                    say(
                        f"bulk load: about {plan.expected_chunks} chunks from {plan.pending} papers onto"
                        f" {plan.stored_chunks} stored; the chunk index is dropped and built again after"
                        " loading"
                    )
                    if not chunk_index.drop_chunk_index(conn, lock_timeout_s=_DROP_WAIT_SECONDS):
                        plan.rebuild = False
                        say("the chunk index is in use by searches: loading with it, row by row")
            elif not exists:
                say("the chunk index is missing (a bulk load was interrupted): building it first ...")
                plan.built_missing_seconds = chunk_index.build_chunk_index(
                    conn,
                    settings.index_build_memory_mb,
                    m=settings.index_m,
                    ef_construction=settings.index_ef_construction,
                )
        if not plan.rebuild:
            guard.close()  # nothing to build at the end: a bulk load may start beside this run
        try:
            yield plan
        finally:
            if plan.rebuild:
                say("building the chunk index ...")
                with db.connect(autocommit=True) as conn:
                    plan.build_seconds = chunk_index.build_chunk_index(
                        conn,
                        settings.index_build_memory_mb,
                        m=settings.index_m,
                        ef_construction=settings.index_ef_construction,
                    )
    finally:
        guard.close()
