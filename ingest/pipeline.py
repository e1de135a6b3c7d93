"""The ingest pipeline: skip what is known, fetch, extract + chunk in a worker process while the
main process embeds and writes the previous papers (both cores busy), one transaction per paper."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, Field

from corpus import ingest_state, papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.models import PaperMeta, PaperRecord
from ground.settings import Settings
from ingest.arxiv_api import ArxivError
from ingest.bulk import IndexPlan, chunk_index_for_run
from ingest.prepare import TEXT_VERSION, PreparedPaper, prepare_pdf, sha256_of
from ingest.skips import skip_reason
from ingest.sources import LOCAL_SOURCES, ItemUnreadable, WorkItem, category_matches

__all__ = ["IngestPipeline", "IngestReport", "paper_text", "skip_reason"]


class Failure(BaseModel):
    paper_id: str
    location: str
    reason: str
    retryable: bool = False
    updated: datetime | None = None


class IngestReport(BaseModel):
    new: int = 0
    updated: int = 0
    skipped: int = 0
    empty: int = 0
    failed: list[Failure] = Field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0
    skip_reasons: dict[str, int] = Field(default_factory=dict)
    index: IndexPlan | None = None  # what the run did with the chunk index (its build is in `seconds`)

    def skip(self, reason: str) -> None:
        # Called from the fetcher thread and the main thread.
        with _REPORT_LOCK:
            self.skipped += 1
            self.skip_reasons[reason] = self.skip_reasons.get(reason, 0) + 1

    def merge(self, other: IngestReport) -> None:
        self.new += other.new
        self.updated += other.updated
        self.skipped += other.skipped
        self.empty += other.empty
        self.failed.extend(other.failed)
        self.chunks += other.chunks
        self.seconds += other.seconds
        for reason, n in other.skip_reasons.items():
            self.skip_reasons[reason] = self.skip_reasons.get(reason, 0) + n
        self.index = other.index or self.index


class Progress(Protocol):
    def add_total(self, n: int) -> None: ...
    def advance(self, chunks: int) -> None: ...


class _NoProgress:
    def add_total(self, n: int) -> None:
        pass

    def advance(self, chunks: int) -> None:
        pass


_DONE = object()
_REPORT_LOCK = threading.Lock()
_GROUP_TEXTS = 256  # embed several small papers together, up to about this many texts
_PARENT_POLL_SECONDS = 0.5  # how soon a worker notices that the main process died


@dataclass
class _Pending:
    item: WorkItem
    prepared: PreparedPaper
    title: str
    texts: list[str]


def _ready(entry: object) -> bool:
    return not (isinstance(entry, tuple) and isinstance(entry[1], Future) and not entry[1].done())


def _n_texts(entry: object) -> int:
    if isinstance(entry, tuple) and isinstance(entry[1], Future) and entry[1].done():
        try:
            return len(entry[1].result().chunks) + 1
        except Exception:
            return 0
    return 0


class IngestPipeline:
    def __init__(
        self,
        settings: Settings,
        db: Database,
        embedder: Embedder,
        progress: Progress | None = None,
        force: bool = False,
        notify: Callable[[str], None] | None = None,
        keep_stored: bool = False,
    ) -> None:
        """`keep_stored`: a stored paper whose PDF now fails or reads empty keeps what it has
        (`db refresh` reading older text again), rather than being recorded as failed or empty."""
        self.settings = settings
        self.keep_stored = keep_stored
        self.db = db
        self.embedder = embedder
        self.progress = progress or _NoProgress()
        self.force = force
        self.notify = notify

    # ---- the fetcher thread: source iteration, skip checks, downloads, extraction submits ----------
    def _feed(
        self,
        items: Iterable[WorkItem],
        pool: Any,
        out: queue.Queue,
        stop: threading.Event,
        max_new: int | None,
        report: IngestReport,
    ) -> None:
        def put(entry: object) -> bool:
            while not stop.is_set():
                try:
                    out.put(entry, timeout=0.2)
                    return True
                except queue.Full:
                    continue
            return False

        taken = 0
        try:
            with self.db.connect(autocommit=True) as conn:
                for item in items:
                    if stop.is_set() or (max_new is not None and taken >= max_new):
                        break
                    data = self.load_local(item)
                    reason = self.skip_before_extraction(conn, item)
                    if reason:
                        report.skip(reason)
                        continue
                    taken += 1
                    self.progress.add_total(1)
                    if data is None:
                        try:
                            data = item.fetch()
                        except ArxivError as exc:
                            if not put((item, exc)):
                                return
                            continue
                    if isinstance(data, ItemUnreadable):
                        if not put((item, data)):
                            return
                        continue
                    future = self.submit_extraction(pool, data)
                    if not put((item, future)):
                        return
        except BaseException as exc:  # surfaced by the main thread, which owns the error reporting
            put(exc)
        finally:
            put(_DONE)

    # ---- the decisions every engine shares ------------------------------------------------------
    @staticmethod
    def load_local(item: WorkItem) -> bytes | Path | ItemUnreadable | None:
        """A local item's bytes, read once: their hash feeds the skip check, the bytes the
        extraction. None for a remote item (fetched after the skip check)."""
        if item.source not in LOCAL_SOURCES:
            return None
        try:
            fetched = item.fetch()
            data = fetched.read_bytes() if isinstance(fetched, Path) else fetched
        except OSError:
            return Path(item.location)  # the extraction reports why it is unreadable
        except ItemUnreadable as exc:
            return exc  # a member of a damaged archive: recorded, retried by the next run
        item.sha256 = sha256_of(data)
        return data

    def skip_before_extraction(self, conn, item: WorkItem) -> str | None:
        """Why this item needs no work (stored at this version, or these very bytes handled)."""
        if self.force:
            return None
        if item.meta.paper_id:
            return skip_reason(
                ingest_state.get_item(conn, item.meta.paper_id), item.meta.version, item.sha256
            )
        if item.sha256 and ingest_state.handled_file(conn, item.sha256, TEXT_VERSION):
            return "unchanged"
        return None

    # ---- where the work runs: overridden by the Ray engine (ingest/ray_engine.py) ---------------
    @contextlib.contextmanager
    def extraction_pool(self) -> Iterator[Any]:
        """What `submit_extraction` submits to: one niced worker process (both cores busy: it
        extracts the next papers while this process embeds)."""
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=1, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(),)
        ) as pool:
            yield pool

    def submit_extraction(self, pool: Any, data: bytes | Path) -> Future:
        return pool.submit(prepare_pdf, data, self.settings.chunk_size, self.settings.chunk_overlap)

    def abort_extraction(self, pool: Any) -> None:
        """Stop the extraction of papers that will not be written (interrupted or failed run)."""
        _stop_workers(pool)

    def warm_up(self) -> None:
        _ = self.embedder.model  # load the model while the worker extracts the first paper

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    # ---- the main thread: embed and write ------------------------------------------------------
    def run(self, items: Iterable[WorkItem], max_new: int | None = None) -> IngestReport:
        """Ingest `items`. A list of known length that adds a large share of the corpus is loaded
        without the chunk index, which is built once at the end (ingest/bulk.py)."""
        started = time.perf_counter()
        with chunk_index_for_run(self.db, self.settings, items, max_new, self.force, self.notify) as plan:
            report = IngestReport(index=plan)
            self._load(items, max_new, report)
        report.seconds = time.perf_counter() - started  # with the index build
        return report

    def _load(self, items: Iterable[WorkItem], max_new: int | None, report: IngestReport) -> None:
        out: queue.Queue = queue.Queue(maxsize=self.settings.extract_lookahead)
        stop = threading.Event()
        with self.extraction_pool() as pool:
            feeder = threading.Thread(
                target=self._feed,
                args=(items, pool, out, stop, max_new, report),
                daemon=True,
                name="ingest-feeder",
            )
            feeder.start()
            completed = False
            try:
                self.warm_up()
                # autocommit: each paper's `conn.transaction()` is then a real, committed transaction
                with self.db.connect(autocommit=True) as conn:
                    while True:
                        entry = out.get()
                        if entry is _DONE:
                            break
                        group = [entry]
                        # Embed every paper that is already extracted in one call: bigger batches,
                        # sorted by length across papers. Each paper is still its own transaction.
                        while sum(_n_texts(e) for e in group) < _GROUP_TEXTS:
                            try:
                                nxt = out.get_nowait()
                            except queue.Empty:
                                break
                            group.append(nxt)
                            if nxt is _DONE or not _ready(nxt):
                                break
                        done = self._process_group(conn, group, report)
                        if done:
                            break
                completed = True
            finally:
                stop.set()
                feeder.join(timeout=5)  # it stops at its next step; a download in flight may take longer
                if completed:
                    for f in _drain(out):
                        f.cancel()
                else:  # interrupted (Ctrl+C, SIGTERM) or failed: leave now, not after the PDF in hand
                    self.abort_extraction(pool)

    def _process_group(self, conn, group: list, report: IngestReport) -> bool:
        """Admit, embed together, write one by one. True when the feeder said it is done."""
        pending: list[_Pending] = []
        finished = False
        for entry in group:
            if entry is _DONE:
                finished = True
                continue
            if isinstance(entry, BaseException):
                raise entry
            item, work = entry
            if isinstance(work, ArxivError | ItemUnreadable):
                with _signals_held():
                    # another item of this run (another archive) may carry the same paper, whole
                    reason = (
                        "same version"
                        if item.meta.paper_id in {p.item.meta.paper_id for p in pending}
                        else None
                    )
                    reason = reason or self.skip_before_extraction(conn, item)
                    if reason:
                        report.skip(reason)
                        self.progress.advance(0)
                    else:
                        self._record_failure(conn, item, str(work), retryable=True, report=report)
                continue
            prepared = work.result()
            with _signals_held():
                admitted = self._admit(conn, item, prepared, report, {p.item.meta.paper_id for p in pending})
            if admitted is not None:
                pending.append(admitted)
        if pending:
            vectors = self.embed([t for p in pending for t in p.texts])
            offset = 0
            for p in pending:
                with _signals_held():  # a paper is committed whole, then Ctrl+C / SIGTERM act
                    self._write(conn, p, vectors[offset : offset + len(p.texts)], report)
                offset += len(p.texts)
        return finished

    def _admit(
        self, conn, item: WorkItem, prepared: PreparedPaper, report: IngestReport, in_group: set[str]
    ) -> _Pending | None:
        """Decide what to do with an extracted paper; returns it when it needs embedding."""
        meta = item.meta
        if not meta.paper_id:
            self._resolve_identity(meta, prepared)
        if prepared.stamp and not meta.categories:
            meta.categories = [prepared.stamp.category]
            meta.primary_category = prepared.stamp.category
            if item.categories_filter and not category_matches(meta.categories, item.categories_filter):
                report.skip("outside category")
                self.progress.advance(0)
                return None
        if meta.paper_id in in_group:
            report.skip("same version")
            self.progress.advance(0)
            return None
        if not self.force:
            # Re-checked here: two files of one run may carry the same paper, and ids found on page 1
            # were unknown to the fetcher.
            reason = skip_reason(ingest_state.get_item(conn, meta.paper_id), meta.version, prepared.sha256)
            if reason:
                report.skip(reason)
                self.progress.advance(0)
                return None
        if (
            self.keep_stored
            and prepared.status in ("failed", "empty")
            and papers.paper_version(conn, meta.paper_id) is not None
        ):
            self._report_failure(item, prepared.reason or prepared.status, False, report)
            return None
        if prepared.status == "failed":
            self._record_failure(conn, item, prepared.reason or "unknown problem", False, report, prepared)
            return None
        if not meta.title:
            # read again from a file without metadata: the description that came with the stored
            # paper (arXiv's, a metadata file's) stays; a first-page guess would replace it
            described = papers.described_with_metadata(conn, meta.paper_id)
            if described is not None:
                _keep_description(meta, described)
        title = meta.title or prepared.title_guess or Path(item.location).stem
        meta.abstract = meta.abstract or prepared.abstract_guess
        meta.authors = meta.authors or prepared.authors_guess
        if prepared.status == "empty" and not meta.title:
            # Nothing searchable and nothing known about it: remember the reason, store no paper.
            with conn.transaction():
                _record(conn, item, "empty", prepared.reason, prepared.sha256)
            report.empty += 1
            self.progress.advance(0)
            return None
        chunk_texts = [c.text for c in prepared.chunks]
        texts = [paper_text(title, meta.abstract, chunk_texts[0] if chunk_texts else ""), *chunk_texts]
        return _Pending(item=item, prepared=prepared, title=title, texts=texts)

    def _write(self, conn, pending: _Pending, vectors: np.ndarray, report: IngestReport) -> None:
        item, prepared, title, meta = pending.item, pending.prepared, pending.title, pending.item.meta
        existed = papers.paper_version(conn, meta.paper_id) is not None
        with conn.transaction():
            papers.replace_paper(
                conn,
                meta,
                title=title,
                source=item.source,
                source_sha256=prepared.sha256,
                n_pages=prepared.n_pages,
                paper_vector=vectors[0],
                chunks=prepared.chunks,
                chunk_vectors=vectors[1:] if len(vectors) > 1 else np.zeros((0, 384), np.float32),
            )
            # A paper without a metadata title is described by the reading of its first page:
            # remembered, so that `db refresh` may correct it (ingest/refresh.py).
            papers.set_described_from_pdf(conn, meta.paper_id, not meta.title)
            _record(
                conn, item, prepared.status, prepared.reason, prepared.sha256, n_chunks=len(prepared.chunks)
            )
        if prepared.status == "empty":
            report.empty += 1
        elif existed:
            report.updated += 1
        else:
            report.new += 1
        report.chunks += len(prepared.chunks)
        self.progress.advance(len(prepared.chunks))

    @staticmethod
    def _resolve_identity(meta: PaperMeta, prepared: PreparedPaper) -> None:
        if prepared.stamp:
            meta.paper_id = prepared.stamp.paper_id
            meta.version = meta.version or prepared.stamp.version
            if prepared.stamp.date and meta.updated is None:
                meta.updated = prepared.stamp.date
        else:
            meta.paper_id = f"local:{prepared.sha256[:16]}" if prepared.sha256 else "local:unreadable"

    def _record_failure(
        self,
        conn,
        item: WorkItem,
        reason: str,
        retryable: bool,
        report: IngestReport,
        prepared: PreparedPaper | None = None,
    ) -> None:
        if not item.meta.paper_id:
            sha = prepared.sha256 if prepared else item.sha256
            item.meta.paper_id = f"local:{sha[:16]}" if sha else f"local:{Path(item.location).name}"
        with conn.transaction():
            _record(
                conn,
                item,
                "failed",
                reason,
                prepared.sha256 if prepared else item.sha256,
                retryable=retryable,
            )
        self._report_failure(item, reason, retryable, report)

    def _report_failure(self, item: WorkItem, reason: str, retryable: bool, report: IngestReport) -> None:
        report.failed.append(
            Failure(
                paper_id=item.meta.paper_id,
                location=item.location,
                reason=reason,
                retryable=retryable,
                updated=item.meta.updated,
            )
        )
        self.progress.advance(0)


def _keep_description(meta: PaperMeta, described: PaperRecord) -> None:
    meta.title, meta.authors, meta.abstract = described.title, described.authors, described.abstract
    meta.categories = described.categories or meta.categories
    meta.primary_category = described.primary_category or meta.primary_category
    meta.published = meta.published or described.published
    meta.updated = meta.updated or described.updated
    meta.pdf_url = meta.pdf_url or described.pdf_url


def _record(
    conn,
    item: WorkItem,
    status: str,
    reason: str | None,
    sha256: str | None,
    n_chunks: int = 0,
    retryable: bool = False,
) -> None:
    ingest_state.record_item(
        conn,
        paper_id=item.meta.paper_id,
        version=item.meta.version,
        source=item.source,
        location=item.location,
        source_sha256=sha256,
        status=status,
        reason=reason,
        retryable=retryable,
        n_chunks=n_chunks,
        text_version=TEXT_VERSION,
    )


def _worker_init(parent: int) -> None:
    # Extraction yields to the embedder: with 2 cores, torch's two OpenMP threads stall whenever
    # one of them is descheduled, so an equal-priority extractor slows embedding by ~15%; niced,
    # it runs in the cycles torch leaves idle and the lookahead queue hides its latency.
    os.nice(10)
    # Ctrl+C reaches the whole foreground job; the main process decides what happens (it stops
    # this worker), so the worker neither dies mid-queue-read nor prints a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="parent-watch").start()


def _exit_with_parent(parent: int) -> None:
    """End the worker once the main process is gone (kill -9, OOM killer): the worker holds both
    ends of its task queue, so it would otherwise wait for work forever, and keep the resource
    tracker alive with it. Not prctl(PR_SET_PDEATHSIG): that fires when the *thread* that spawned
    the worker ends, and the pool spawns it from the feeder thread, which ends before the run."""
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the main thread talks to the database, and act on them (the
    handler in place runs: KeyboardInterrupt in the CLI) right after. Interrupted mid-query, a
    connection is left with a command in flight: its rollback fails ('another command is already
    in progress') and says so on the way out. Database work here is short; the long waits
    (extraction, embedding) stay interruptible."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are delivered to the main thread only
        return
    held: list[int] = []
    watched = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in watched}
    if any(handler is None for handler in previous.values()):  # set outside Python: cannot restore
        yield
        return
    for sig in watched:
        signal.signal(sig, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if held:
            signal.raise_signal(held[0])


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Shut the pool down without waiting for the paper being extracted: its result is not needed.
    The workers go first; the pool then finds itself broken, fails its pending futures and closes
    its task pipe, which releases a PDF half-written into it (else the exit would wait on that
    write forever). Its own shutdown is waited for, so all that is done before the process exits
    (else the resource tracker sometimes warns of a leaked semaphore). The caller cancels none of
    the futures: Python 3.11's pool crashes failing a future that is already cancelled."""
    # No public handle on the pool's processes before Python 3.14 (terminate_workers).
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def paper_text(title: str, abstract: str | None, first_chunk: str) -> str:
    """What the paper-level vector is made of: title and abstract, else title and opening text."""
    if abstract:
        return f"{title}. {abstract}"
    return f"{title}. {first_chunk[:600]}".strip()


def _drain(q: queue.Queue) -> list[Future]:
    futures = []
    while True:
        try:
            entry = q.get_nowait()
        except queue.Empty:
            return futures
        if isinstance(entry, tuple) and isinstance(entry[1], Future):
            futures.append(entry[1])
