# chatpapers app image: the CLI and the web service. PostgreSQL runs in its own container.
FROM python:3.11-slim
# A compiler for llama-cpp-python, which PyPI has only as source (scripts/setup.sh builds it).
RUN apt-get update && apt-get install -y --no-install-recommends build-essential && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# torch first, from PyTorch's CPU-only index: PyPI's Linux torch wheel depends on several GB of
# CUDA packages that a CPU server never uses. setup.sh's `torch==2.13.0` is then already satisfied
# (2.13.0+cpu matches it). For a CUDA image pass another index, e.g.
#   docker compose build --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1
RUN python -m venv .venv \
    && .venv/bin/python -m pip install --disable-pip-version-check -q --index-url "${TORCH_INDEX_URL}" "torch==2.13.0"
COPY pyproject.toml requirements.lock README.md ./
COPY scripts ./scripts
COPY ground ./ground
COPY chatpapers ./chatpapers
COPY corpus ./corpus
COPY ingest ./ingest
COPY agent ./agent
COPY api ./api
COPY eval ./eval
COPY web ./web
# The llama-cpp-python wheel is built portable (AVX2: the image runs on CPUs other than the
# builder's) into a throwaway cache: the image keeps the installed package, not a second copy.
# Bytecode compiled now: the app user cannot write __pycache__ under /app at run time.
RUN CHATPAPERS_WHEEL_CACHE=/tmp/wheels CHATPAPERS_LLAMA_CPU=portable bash scripts/setup.sh && rm -rf /tmp/wheels /root/.cache \
    && .venv/bin/python -m compileall -q ground chatpapers corpus ingest agent api eval
# Not root: a flaw in the web app or a parser then cannot rewrite the installed code. /data and
# /reports are created owned by that user, so the named volumes mounted there start writable.
RUN useradd --create-home --uid 1000 chatpapers && mkdir -p /data /reports \
    && chown chatpapers:chatpapers /data /reports
USER chatpapers
ENV PATH="/app/.venv/bin:${PATH}" CHATPAPERS_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
ENTRYPOINT ["chatpapers"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
