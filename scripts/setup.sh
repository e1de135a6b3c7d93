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
echo "chatpapers installed in $(pwd)/.venv" >&2
