"""The ingest pipeline on Ray (`chatpapers ingest ... --engine ray`): PDF extraction and chunking
as Ray tasks on CPU workers, embedding on actors (one per GPU of the cluster; one on CPUs), writes
from this process through the same `corpus` functions, one transaction per paper. Each group of
texts the pipeline embeds is split across the actors, which embed their parts at the same time.

Only where the work runs differs from the in-process pipeline: the skip checks, the decisions on
extracted papers, the failure records and the writes are IngestPipeline's own (this class
overrides its extraction pool, embedding and warm-up, nothing else), so both engines store the
same rows for the same input. Why Ray tasks and an actor rather than a `ray.data` Dataset: the
pipeline decides per paper as results come back (skip, record a failure, write one transaction
per paper, stop cleanly on Ctrl-C), which a future per PDF (`ray.remote(...).remote()` turned
into a `concurrent.futures.Future`) gives directly, while a Dataset's streaming executor owns the
order and the retries of its stages; and the writes stay in this process because one writer is
what the bulk load's index handling assumes (ingest/bulk.py). Ray is optional
(`pip install 'chatpapers[ray]'`); it is imported only here, when this engine is asked for."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest.pipeline import IngestPipeline, Progress
from ingest.prepare import prepare_pdf
from ingest.sources import SourceError

RAY_PIN = "ray[data]==2.60.0"  # the pin of pyproject's `ray` extra and of requirements.lock
# The local cluster's shared-memory object store: PDFs in flight and their chunks, a few MB each.
# Ray's default (30% of RAM) is far more than a laptop should give away for that.
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
_EXTRACT_NICENESS = 10
_ACTOR_START_SECONDS = 600  # loading the model; generous for a cold node


class RayUnavailable(SourceError):
    """--engine ray without Ray installed, or a cluster that cannot be reached."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            f"--engine ray needs Ray: pip install 'chatpapers[ray]' (or: pip install '{RAY_PIN}')"
        ) from None
    return ray


def _extract(data: bytes | Path, chunk_size: int, chunk_overlap: int) -> Any:
    """A Ray task: the in-process worker's job, in a niced Ray worker. Like that worker it yields
    to the embedder: on 2 cores torch's threads stall whenever one of them is descheduled."""
    if os.getpriority(os.PRIO_PROCESS, 0) < _EXTRACT_NICENESS:
        os.nice(_EXTRACT_NICENESS - os.getpriority(os.PRIO_PROCESS, 0))
    return prepare_pdf(data, chunk_size, chunk_overlap)


def _check_reachable(address: str) -> None:
    """Ray retries an unreachable head for minutes, printing as it goes: a HOST:PORT that takes no
    connection is refused here, at once, in one line."""
    if address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray-address: HOST:PORT of the cluster's head, or auto (not {address!r})")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {exc}") from None


class _EmbedActor:
    """Holds the model once for the whole run; Ray runs its calls one at a time."""

    def __init__(self, batch_size: int | None, threads: int, device: str) -> None:
        # Ray sets OMP_NUM_THREADS to the actor's CPU share (1): torch would use one core only.
        import torch

        torch.set_num_threads(threads)
        self.embedder = Embedder(batch_size=batch_size, threads=threads, device=device)

    def ready(self) -> bool:
        _ = self.embedder.model
        return True

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    def texts_embedded(self) -> int:
        return self.embedder.texts_embedded


def split_evenly(n_texts: int, parts: int) -> list[tuple[int, int]]:
    """[start, end) of at most `parts` contiguous slices of n_texts, sizes within one, none empty
    (one empty slice when there is nothing to split)."""
    parts = max(1, min(parts, n_texts))
    size, extra = divmod(n_texts, parts)
    bounds, start = [], 0
    for i in range(parts):
        end = start + size + (i < extra)
        bounds.append((start, end))
        start = end
    return bounds


class RayIngestPipeline(IngestPipeline):
    """IngestPipeline with extraction as Ray tasks and embedding on Ray actors. Use as a context
    manager: it connects to `address` (or starts a local cluster of `num_cpus` CPUs when none is
    given) and loads the model on the actors before `run`, and shuts a cluster it started down."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        embedder: Embedder,
        progress: Progress | None = None,
        force: bool = False,
        notify: Callable[[str], None] | None = None,
        address: str | None = None,
        num_cpus: int | None = None,
        embed_threads: int | None = None,
        embed_cpus: float = 0.0,
        embed_actors: int | None = None,
    ) -> None:
        super().__init__(settings, db, embedder, progress=progress, force=force, notify=notify)
        self.address = address
        self.num_cpus = num_cpus or os.cpu_count() or 2
        # torch threads of the actor: every core of its node by default, as in-process
        self.embed_threads = embed_threads or os.cpu_count() or 2
        # CPUs the actor reserves. 0: extraction tasks may use every CPU, niced, so they run in
        # the cycles torch leaves idle (measured on 2 cores: 1.05x and 1.18x in-process, where
        # reserving 1 CPU, one extraction task at a time, gave 0.87x-1.31x)
        self.embed_cpus = embed_cpus
        if embed_actors is not None and embed_actors < 1:
            raise ValueError("embed_actors: at least 1")
        # None: one per GPU of the cluster, one where it has none (on CPUs a second copy of the
        # model competes with the first for the same cores)
        self.embed_actors = embed_actors
        self.gpus = 0.0
        self._ray: Any = None
        self._started_here = False
        self._actors: list[Any] = []
        self._extract: Any = None

    # ---- the cluster --------------------------------------------------------------------------
    def __enter__(self) -> RayIngestPipeline:
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            if self.address:
                _check_reachable(self.address)
                try:
                    ray.init(address=self.address, logging_level="WARNING", log_to_driver=False)
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    hint = (
                        ""
                        if os.environ.get("RAY_AUTH_MODE")
                        else " (a cluster with token authentication, Ray's default, also needs"
                        " RAY_AUTH_MODE=token and its token in ~/.ray/auth_token or RAY_AUTH_TOKEN)"
                    )
                    raise RayUnavailable(
                        f"cannot reach the Ray cluster at {self.address}: {exc}{hint}"
                    ) from None
            else:
                ray.init(
                    address="local",  # a new cluster, even where RAY_ADDRESS names another
                    num_cpus=self.num_cpus,
                    object_store_memory=_LOCAL_OBJECT_STORE_BYTES,
                    include_dashboard=False,
                    logging_level="WARNING",
                    log_to_driver=False,
                    # Ray nices its workers (15): the embedding actor would then yield to the
                    # writes and to anything else on the machine. The extraction tasks nice
                    # themselves, as the in-process worker does.
                    _system_config={"worker_niceness": 0},
                )
            self._started_here = True
        try:
            cluster_gpus = int(ray.cluster_resources().get("GPU", 0))
            self.gpus = 1.0 if cluster_gpus >= 1 else 0.0
            self.embed_actors = self.embed_actors or max(1, cluster_gpus)
            if cluster_gpus and self.embed_actors > cluster_gpus:
                raise RayUnavailable(
                    f"{self.embed_actors} embedding actors, one GPU each, on a cluster of {cluster_gpus} GPUs"
                )
            self._extract = ray.remote(num_cpus=1, max_retries=1)(_extract)
            actor = ray.remote(_EmbedActor).options(num_cpus=self.embed_cpus, num_gpus=self.gpus)
            device = "cuda" if self.gpus else "cpu"
            self._actors = [
                actor.remote(self.settings.embed_batch_size, self.embed_threads, device)
                for _ in range(self.embed_actors)
            ]
            # actors the cluster has no room for would wait here for ever: say so instead
            ready = [a.ready.remote() for a in self._actors]
            _, waiting = ray.wait(ready, num_returns=len(ready), timeout=_ACTOR_START_SECONDS)
            if waiting:
                raise RayUnavailable(
                    f"{len(waiting)} of {len(ready)} embedding actors did not start within"
                    f" {_ACTOR_START_SECONDS} s: the cluster has {cluster_gpus} GPUs and"
                    f" {ray.cluster_resources().get('CPU', 0):g} CPUs for them"
                )
            ray.get(ready)
        except BaseException:
            self.__exit__()  # a model that fails to load must not leave the cluster started here
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        ray = self._ray
        if ray is None:
            return
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self._actors = []
        if self._started_here:
            ray.shutdown()
            self._started_here = False

    # ---- the overrides ------------------------------------------------------------------------
    @contextlib.contextmanager
    def extraction_pool(self) -> Iterator[Any]:
        if not self._actors:
            raise RuntimeError(
                "RayIngestPipeline is used as a context manager: with RayIngestPipeline(...) as p"
            )
        yield None

    def submit_extraction(self, pool: Any, data: bytes | Path) -> Future:
        ref = self._extract.remote(data, self.settings.chunk_size, self.settings.chunk_overlap)
        return ref.future()

    def abort_extraction(self, pool: Any) -> None:
        pass  # tasks in flight finish on their own; nothing of theirs is written

    def warm_up(self) -> None:
        pass  # the actor loaded the model on entry

    def embed(self, texts: list[str]) -> np.ndarray:
        slices = split_evenly(len(texts), len(self._actors))  # as many as there are texts, at most
        parts = [a.embed.remote(texts[i:j]) for a, (i, j) in zip(self._actors, slices, strict=False)]
        vectors = np.concatenate(self._ray.get(parts))
        self.embedder.texts_embedded += len(texts)  # counted where the in-process engine counts
        return vectors

    def texts_per_actor(self) -> list[int]:
        return self._ray.get([a.texts_embedded.remote() for a in self._actors])
