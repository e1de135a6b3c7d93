"""The llama.cpp CPU build, side by side: prompt reading and generation speed of the local model
with the installed llama-cpp-python and with another build of it. Prints figures.

    python bench/llama_cpu.py --other /tmp/llama-avx2

`--other` is a folder holding another build (`pip install --no-deps --target DIR WHEEL`, e.g. the
wheel scripts/setup.sh builds with CHATPAPERS_LLAMA_CPU=portable). Each build runs in its own
process, one after the other, on the same fixed 800-token prompt (a slice of README.md), two runs
each, greedy; the better run of each is reported. Why it exists: scripts/llama_cpu.sh turns on
AVX-512 where the CPU has it, and this is what it is worth."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATED = 64


def measure() -> dict:
    """One build, in this process: tokens per second reading the prompt and generating."""
    sys.path.insert(0, str(ROOT))
    import llama_cpp

    from agent.llm.model_files import model_file
    from ground.settings import load_settings

    llm = llama_cpp.Llama(
        model_path=str(model_file(load_settings().data_dir)), n_ctx=4096, n_threads=2, verbose=False
    )
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    tokens = llm.tokenize(("Summarise the following text in three sentences.\n\n" + text).encode())[:800]
    best = {"prompt_tok_s": 0.0, "gen_tok_s": 0.0}
    for _ in range(2):
        llm.reset()  # else generate() reuses the evaluated prefix and reads nothing
        start, first, n = time.perf_counter(), None, 0
        for _token in llm.generate(tokens, temp=0.0, reset=True):
            if first is None:
                first = time.perf_counter()
            n += 1
            if n >= GENERATED:
                break
        end = time.perf_counter()
        best["prompt_tok_s"] = max(best["prompt_tok_s"], len(tokens) / (first - start))
        best["gen_tok_s"] = max(best["gen_tok_s"], (n - 1) / (end - first))
    info = llama_cpp.llama_print_system_info().decode()
    best["build"] = " ".join(p.split(" =")[0] for p in info.split(" | ") if "AVX" in p and "= 1" in p)
    return best


def run(pythonpath: str | None) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run(
        [sys.executable, __file__, "--measure"], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--other",
        type=Path,
        required="--measure" not in sys.argv,
        help="folder with another llama-cpp-python build (pip install --target)",
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    if not (args.other / "llama_cpp").is_dir():
        parser.error(f"{args.other} holds no llama_cpp package")
    installed, other = run(None), run(str(args.other))
    for name, fig in (("installed", installed), (f"other ({args.other})", other)):
        print(
            f"{name:32s} prompt {fig['prompt_tok_s']:6.1f} tok/s  "
            f"generate {fig['gen_tok_s']:5.1f} tok/s  [{fig['build']}]"
        )
    print(
        f"installed / other: prompt {installed['prompt_tok_s'] / other['prompt_tok_s']:.2f}x, "
        f"generate {installed['gen_tok_s'] / other['gen_tok_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
