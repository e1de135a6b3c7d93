"""A small-N run of bench/scale.py (the 1M / 10M runs are benchmarks, not tests): it loads through
the project's SQL, builds both indexes, and prints every figure the README's scale table shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(work: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATPAPERS_") and k != "DATABASE_URL"}
    done = subprocess.run(
        [
            *(sys.executable, "bench/scale.py", "--chunks", "3000", "--queries", "12", "--increment", "300"),
            *("--base-pdfs", "2", "--ef-search", "64", "--work", str(work), *args),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_scale_benchmark_runs_and_prints_its_figures(tmp_path: Path) -> None:
    text = _bench(
        tmp_path,
        "--clients",
        "1,2",
        "--binary",
        "--m",
        "12",
        "--ef-construction",
        "48",
        "--layouts",
        "--layout-increment",
        "200",
    )
    assert re.search(r"corpus: [\d,]+ papers, 3,000 chunks", text), text
    assert "chunk index built with m=12, ef_construction=48" in text, text
    real, synthetic = map(
        float, re.search(r"real chunks ([\d.]+), as many synthetic chunks ([\d.]+)", text).groups()
    )
    assert 1 < real < 384 and 1 < synthetic < 384, text
    per_chunk = int(re.search(r"storage per chunk incl\. indexes: ([\d,]+) B", text)[1].replace(",", ""))
    assert 1500 < per_chunk < 4000, text
    recall = float(re.search(r"search: chunk ANN, ef_search=64 +1 client\(s\).*recall ([\d.]+)", text)[1])
    assert recall >= 0.9, text
    for label in (
        "search: binary index, re-rank 200",
        "search tool: hybrid related_papers",
        "get_recent_papers recent_2y",
        "get_recent_papers recent_30d",
        "get_information_from_paper",
        "get_prior_context + get_subsequent_context",
    ):
        assert re.search(re.escape(label) + r".* 2 client\(s\): p50 +[\d.]+ ms +p95 +[\d.]+ ms", text), label
    assert re.search(r"returned \d: 100% of queries", text), text
    assert re.search(r"nightly increment: 300 chunks .*: [\d.]+ s", text), text
    for table in ("chunk_dates_flat", "chunk_dates_by_month"):
        assert re.search(rf"layout {table}: 3,000 rows copied .* HNSW build [\d.]+ s", text), text
        layout_recall = float(
            re.search(rf"{table}: no date filter, ef_search=64 +1 client.*recall ([\d.]+)", text)[1]
        )
        assert layout_recall >= 0.9, text
        assert re.search(
            rf"{table}: recent_30d chunks +1 client.*recall [\d.]+ +returned \d+: 100% of", text
        ), text
        assert re.search(rf"layout {table}: increment of 200 chunks .*: [\d.]+ s", text), text
    assert "(203 month partitions)" in text, text

    # measured again with other graph parameters: the index is built again, the first run's
    # increment (not in the truth) is taken out before measuring and added again at the end
    text = _bench(tmp_path, "--clients", "1", "--reuse", "--m", "16", "--ef-construction", "40")
    assert re.search(r"removed an earlier run's increment \(\d+ papers\)", text), text
    assert "chunk index built with m=16, ef_construction=40" in text, text
    assert re.search(r"corpus: [\d,]+ papers, 3,000 chunks", text), text
    recall = float(re.search(r"search: chunk ANN, ef_search=64 +1 client\(s\).*recall ([\d.]+)", text)[1])
    assert recall >= 0.9, text
    assert re.search(r"nightly increment: 300 chunks .*: [\d.]+ s", text), text


def test_the_noise_of_the_synthetic_vectors_is_the_one_asked_for() -> None:
    """--noise reaches every generated vector: none is noise-free mixing, and more noise spreads
    the set over more dimensions (what the bench's intrinsic-dimensionality line compares)."""
    import numpy as np

    from bench.scale import Base, intrinsic_dimensionality, synthetic_sample

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(120, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    base = Base(
        vectors=vectors,
        texts_z=[b""] * 120,
        paper_of=np.repeat(np.arange(4), 30),
        starts=np.arange(4) * 30,
        counts=np.full(4, 30),
        paper_vectors=vectors[::30],
        titles=[f"paper {i}" for i in range(4)],
        abstracts=[None] * 4,
        authors=[[]] * 4,
        queries=[],
    )
    quiet = synthetic_sample(base, 600, 5, noise=0.0).astype(np.float32)
    noisy = synthetic_sample(base, 600, 5, noise=0.02).astype(np.float32)
    assert quiet.shape == noisy.shape == (600, 384)
    cosines = np.sum(quiet * noisy, axis=1)
    assert 0.5 < cosines.max() < 0.999  # same mixtures, every one moved
    assert intrinsic_dimensionality(quiet) < intrinsic_dimensionality(noisy)
