"""Where benchmark scripts leave their figures: printed, and kept as JSON under bench/out/."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np


def write_figures(out_dir: Path, name: str, figures: dict, width: int = 32) -> Path:
    """Print `figures` one per line and write them to `out_dir/<name>-<UTC time>.json`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(figures, indent=2))
    print()
    for key, value in figures.items():
        print(f"{key:{width}} {value:.3f}" if isinstance(value, float) else f"{key:{width}} {value}")
    print(f"\nwritten to {out}")
    return out


def pct(values: list[float], q: float) -> float:
    """The q-th percentile of `values` (NaN for none)."""
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")
