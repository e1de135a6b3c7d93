# chatpapers app image: the CLI and the web service. PostgreSQL runs in its own container.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends build-essential && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY scripts ./scripts
COPY chatpapers ./chatpapers
COPY corpus ./corpus
COPY ingest ./ingest
COPY agent ./agent
COPY api ./api
COPY eval ./eval
COPY web ./web
# Pass a CPU-only torch index here to keep the image small, e.g. --build-arg PIP_EXTRA_INDEX_URL=...
ARG PIP_EXTRA_INDEX_URL=""
ENV PIP_EXTRA_INDEX_URL=${PIP_EXTRA_INDEX_URL}
RUN bash scripts/setup.sh
ENV PATH="/app/.venv/bin:${PATH}" CHATPAPERS_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
ENTRYPOINT ["chatpapers"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
