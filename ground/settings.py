"""The one settings tree, read from environment variables and `.env`.

Every component receives a `Settings` object instead of reading the environment itself: the CLI's
composition root (`chatpapers.services`) builds it once per process, and tests and benchmarks
build one with overrides through `load_settings`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ground import __version__


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("chatpapers", appauthor=False))


class Settings(BaseSettings):
    """chatpapers configuration. Environment variables are `CHATPAPERS_<FIELD>` unless noted."""

    model_config = SettingsConfigDict(
        env_prefix="CHATPAPERS_", env_file=".env", extra="ignore", populate_by_name=True
    )

    # --- storage -------------------------------------------------------------------------------
    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL", "CHATPAPERS_DATABASE_URL"),
        description="PostgreSQL URL (with pgvector). Unset: the embedded server under data_dir/pg.",
    )
    data_dir: Path = Field(default_factory=_default_data_dir, description="Where embedded data lives.")
    pg_ram_mb: int | None = Field(
        None,
        ge=256,
        description="Memory (MB) the embedded PostgreSQL sizes shared_buffers, maintenance_work_mem "
        "etc. for. Unset: all of this machine's RAM (`chatpapers db sizing` shows the values).",
    )
    pg_settings: dict[str, str] = Field(
        default_factory=dict,
        description="PostgreSQL settings for the embedded server on top of the sized ones, as JSON: "
        '{"shared_buffers": "2GB"}.',
    )

    @field_validator("pg_settings")
    @classmethod
    def _setting_names(cls, value: dict[str, str]) -> dict[str, str]:
        # they are written into the server's configuration file: one line each, nothing else
        for name, setting in value.items():
            if not re.fullmatch(r"[a-z_][a-z0-9_.]*", name) or re.search(r"['\\\n\r]", str(setting)):
                raise ValueError(
                    f"CHATPAPERS_PG_SETTINGS: {name!r} is not a PostgreSQL setting name and value"
                )
        return value

    # --- arXiv ---------------------------------------------------------------------------------
    arxiv_api_url: str = Field("https://export.arxiv.org/api/query", description="arXiv API endpoint.")
    arxiv_pdf_url: str = Field(
        "https://arxiv.org/pdf", description="Where PDFs are fetched from (<url>/<id>v<N>)."
    )
    arxiv_delay_seconds: float = Field(3.0, ge=0, description="Pause between two requests to arXiv.")
    arxiv_max_retries: int = Field(5, ge=0, description="Retries on 429/5xx/timeouts, with backoff.")
    arxiv_timeout_seconds: float = Field(60.0, gt=0, description="Timeout of one request to arXiv.")
    arxiv_page_size: int = Field(100, ge=1, le=2000, description="Feed entries per arXiv API request.")
    first_run_max_results: int = Field(
        200,
        ge=1,
        description="Papers taken on a category's first run when neither --since nor --max-results.",
    )
    user_agent: str = Field(
        f"chatpapers/{__version__} (self-hosted research assistant; polite bulk ingest)",
        description="User-Agent of every request to arXiv.",
    )

    # --- pipeline ------------------------------------------------------------------------------
    chunk_size: int = Field(1000, ge=100, description="Target characters per chunk.")
    chunk_overlap: int = Field(0, ge=0, description="Characters shared by neighbouring chunks.")
    embed_batch_size: int | None = Field(
        None,
        ge=1,
        description="Texts per embedding batch. Unset means 1 on a CPU (each text alone: no padding, faster"
        " on CPUs, and a chunk's vector depends only on its text) and 64 on a GPU.",
    )
    extract_lookahead: int = Field(4, ge=1, description="Papers extracted ahead of the embedder.")
    bulk_index_rebuild_ratio: float = Field(
        0.5,
        ge=0,
        description="A run of known size (--pdf-dir, --pdf-tar) expected to add more than this share of "
        "the chunks stored drops the chunk search index, loads, and builds it again at the end (faster "
        "than updating it row by row); 0: always, for runs of at least bulk_index_min_papers.",
    )
    bulk_index_min_papers: int = Field(
        200, ge=1, description="Runs with fewer papers to add keep the chunk index and update it row by row."
    )
    index_build_memory_mb: int | None = Field(
        None,
        ge=64,
        description="maintenance_work_mem of a chunk index build: the graph is built much faster when it "
        "fits (about 1.2 GB per million chunks). Unset: the server's own (the embedded server's is a "
        "quarter of RAM).",
    )
    index_m: int = Field(
        16,
        ge=2,
        le=100,
        description="Links per node of the chunk index's HNSW graph (pgvector's default 16), used when "
        "the index is built (a bulk ingest, `chatpapers db index --rebuild`). More: better recall, "
        "a larger index, slower builds and inserts.",
    )
    index_ef_construction: int = Field(
        64,
        ge=4,
        le=1000,
        description="Candidates kept while the chunk index is built (pgvector's default 64; at least "
        "2 x index_m). 128 measured at 1M chunks: recall@10 0.65 -> 0.79 at hnsw_ef_search 64 "
        "(0.89 -> 0.935 at 400), build time 1.7x, same index size.",
    )

    @model_validator(mode="after")
    def _ef_construction_covers_m(self) -> Settings:
        # pgvector refuses the build otherwise, after the load it followed: say so at start
        if self.index_ef_construction < 2 * self.index_m:
            raise ValueError("CHATPAPERS_INDEX_EF_CONSTRUCTION must be at least 2 x CHATPAPERS_INDEX_M")
        return self

    # --- agent ----------------------------------------------------------------------------------
    llm: str | None = Field(
        default=None,
        description="local, local:/path/to/model.gguf, or <provider>:<model> for any provider of LangChain's "
        "init_chat_model (openai:gpt-4o-mini, ollama:llama3.1, anthropic:claude-sonnet-4-5, ...); "
        "unset: local if installed.",
    )
    llm_context: int = Field(8192, ge=2048, description="Context window of the local model (tokens).")
    llm_threads: int | None = Field(
        None, ge=1, description="CPU threads of the local model; unset: all cores."
    )
    max_steps: int = Field(6, ge=1, le=20, description="Tool steps per answer before it is forced.")
    reader: Literal["narrow", "agent"] = Field(
        "narrow",
        description="`narrow`: the paper(s) and the few sentences that answer are found in code, the "
        "model writes 1-3 sentences from them (built for small models); `agent`: the model picks tools "
        "step by step.",
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_API_KEY", "CHATPAPERS_OPENAI_API_KEY"),
        description="Key for openai:<model> (not needed for a local OpenAI-compatible server).",
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_BASE_URL", "CHATPAPERS_OPENAI_BASE_URL"),
        description="An OpenAI-compatible server (vLLM, llama.cpp server, LM Studio) for openai:<model>.",
    )
    ollama_host: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OLLAMA_HOST", "CHATPAPERS_OLLAMA_HOST"),
        description="Ollama's address for ollama:<model>; unset: the local default.",
    )

    # --- traces -------------------------------------------------------------------------------
    trace_endpoint: str | None = Field(
        None,
        description="OpenTelemetry traces of every turn, step, tool call and model call, sent by OTLP/HTTP "
        "to this address (e.g. http://localhost:4318 for a local collector or Jaeger; Langfuse: "
        "https://cloud.langfuse.com/api/public/otel); unset: no tracing.",
    )
    trace_headers: SecretStr | None = Field(
        None,
        description="Headers for the trace endpoint, `name=value` pairs separated by commas "
        "(e.g. Authorization=Basic <base64 of public:secret key> for Langfuse).",
    )

    @field_validator("trace_headers")
    @classmethod
    def _header_pairs(cls, value: SecretStr | None) -> SecretStr | None:
        # checked here, so a malformed value stops the start with one line instead of a failed question
        for item in value.get_secret_value().split(",") if value else []:
            name, sep, _ = item.partition("=")
            if not sep or not name.strip():
                raise ValueError("CHATPAPERS_TRACE_HEADERS: each item is name=value, separated by commas")
        return value

    trace_content: bool = Field(
        False, description="Put questions, answers and tool arguments in the traces too (off: sizes only)."
    )

    # --- web ----------------------------------------------------------------------------------
    auth: Literal["password", "none"] = Field(
        "password", description="`password`: accounts; `none`: single-user local mode (a laptop)."
    )
    session_days: int = Field(30, ge=1, description="How long a web sign-in lasts.")
    registration: Literal["open", "closed"] = Field(
        "open",
        description="`closed`: nobody can create an account from the page; `chatpapers users add` still can.",
    )
    registrations_per_hour: int = Field(
        5, ge=1, description="Accounts one client address may create per hour (429 beyond)."
    )
    failed_logins_per_minute: int = Field(
        10, ge=1, description="Failed sign-ins per client address per minute (429 beyond)."
    )
    failed_logins_per_account_hour: int = Field(
        50,
        ge=1,
        description="Failed sign-ins per account per hour from browsers it has not signed in from "
        "before (stops guessing spread over many addresses; the owner's own browser is exempt).",
    )
    trusted_proxies: str = Field(
        "",
        description="Addresses of reverse proxies whose X-Forwarded-For/-Proto headers are believed "
        "(comma-separated IPs or networks, or *). Empty: none, the connection's own address counts.",
    )
    max_message_chars: int = Field(8000, ge=1, description="Longer questions are refused (413).")
    body_seconds: float = Field(
        20.0, gt=0, description="Time a client may take to send a request body (408 beyond)."
    )
    sends_per_minute: int = Field(20, ge=1, description="Questions one user may send per minute (429).")
    max_active_answers: int = Field(64, ge=1, description="Answers under way at once; beyond: 503.")
    answer_slots: int = Field(
        4, ge=1, description="Answers computed at once; others wait after their first event."
    )

    # --- search --------------------------------------------------------------------------------
    hnsw_ef_search: int = Field(64, ge=1, le=1000, description="HNSW search breadth (recall vs. latency).")
    retrieval: Literal["hybrid", "dense"] = Field(
        "hybrid",
        description="`hybrid`: vectors and full text fused by reciprocal rank; `dense`: vectors only.",
    )

    @property
    def pg_data_dir(self) -> Path:
        return self.data_dir / "pg"

    def describe_database(self) -> str:
        """The database location for messages, without any password."""
        if self.database_url:
            from psycopg.conninfo import conninfo_to_dict

            parts = conninfo_to_dict(self.database_url)
            host = parts.get("host", "localhost")
            return f"{host}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"
        return f"embedded PostgreSQL in {self.pg_data_dir}"


def load_settings(env_file: str | None = ".env", **overrides: object) -> Settings:
    """The settings from the environment (and `env_file`), with `overrides` on top. The only
    place that builds a `Settings`: a process calls it once, in its composition root."""
    return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg]
