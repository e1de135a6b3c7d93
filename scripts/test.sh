#!/usr/bin/env bash
# Set up, lint, and run the whole test suite against real PostgreSQL (embedded) and the shared corpus.
# Extra arguments go to pytest (e.g. -k retrieval, -m "not slow").
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh || exit 1

if [ ! -f ../shared/corpus/metadata.jsonl ]; then
    echo "the tests need the shared corpus at $(cd .. && pwd)/shared/corpus" >&2
    exit 1
fi
# The browser test drives Debian's Chromium (playwright cannot download browsers here).
if [ ! -x /usr/bin/chromium ]; then
    echo "installing chromium for the browser test ..." >&2
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    { "${as_root[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium >/dev/null; } \
        || { echo "could not install chromium (apt-get install chromium)" >&2; exit 1; }
fi
.venv/bin/ruff check . || exit 1
# The layers contract of pyproject.toml: no import from a lower layer to a higher one, no loops.
.venv/bin/lint-imports --no-cache || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
exit "$rc"
