"""Shared fixtures: one embedded PostgreSQL per test run, a fresh migrated database per test that
needs one (cloned from a template), one embedder, the local fake arXiv, and one small corpus
subset ingested once: read-only for the tests that only read it (enforced by the server), and
cloned for each test that writes (chats, accounts, summaries)."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from corpus.db import Database, ensure_database
from corpus.embedded import start_embedded
from corpus.embedder import Embedder
from corpus.migrations import migrate
from ground.settings import Settings, load_settings
from tests.fake_arxiv import CORPUS, FakeArxiv

# Small papers that still make retrieval meaningful: the two retrieval targets, ViT (attention and
# residual connections, a real distractor) and a few short ones from other fields of CS.
SUBSET = [
    "1706.03762v5.pdf",
    "1512.03385v1.pdf",
    "2010.11929v2.pdf",
    "1212.5701v1.pdf",
    "1503.02531v1.pdf",
    "2304.02623v1.pdf",
    "1608.03417v1.pdf",
]

_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_admin_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The embedded server's admin URL; started once, stopped when the test process exits."""
    return start_embedded(tmp_path_factory.mktemp("pg") / "data")


@pytest.fixture(scope="session")
def template_db(pg_admin_url: str) -> str:
    ensure_database(pg_admin_url, "chatpapers_template")
    with psycopg.connect(make_conninfo(pg_admin_url, dbname="chatpapers_template"), autocommit=True) as c:
        migrate(c)
    return "chatpapers_template"


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not (CORPUS / "metadata.jsonl").exists():
        pytest.fail(f"the shared test corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def fake_arxiv_server() -> Iterator[FakeArxiv]:
    fake = FakeArxiv().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake_arxiv(fake_arxiv_server: FakeArxiv) -> FakeArxiv:
    fake_arxiv_server.reset()
    return fake_arxiv_server


def make_settings(url: str, data_dir: Path, fake: FakeArxiv | None = None, **overrides) -> Settings:
    values: dict = {"database_url": url, "data_dir": data_dir, "arxiv_delay_seconds": 0.0}
    if fake is not None:
        values.update(arxiv_api_url=fake.api_url, arxiv_pdf_url=fake.pdf_url)
    values.update(overrides)
    return load_settings(env_file=None, **values)


@pytest.fixture
def fresh_db(pg_admin_url: str, template_db: str) -> str:
    """URL of a new, migrated, empty database for this test."""
    name = f"t_{os.getpid()}_{next(_counter)}"
    ensure_database(pg_admin_url, name, template=template_db)
    return make_conninfo(pg_admin_url, dbname=name)


@pytest.fixture
def settings(fresh_db: str, tmp_path: Path, fake_arxiv: FakeArxiv) -> Settings:
    return make_settings(fresh_db, tmp_path / "data", fake_arxiv)


@pytest.fixture
def db(settings: Settings) -> Database:
    return Database(settings)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


def subset_folder(dest: Path, names: list[str], corpus: Path = CORPUS) -> tuple[Path, Path]:
    """A folder of links to some corpus PDFs plus their metadata lines."""
    dest.mkdir(parents=True, exist_ok=True)
    wanted = set(names)
    lines = []
    for line in (corpus / "metadata.jsonl").read_text().splitlines():
        rec = json.loads(line)
        name = Path(rec["file"]).name
        if name in wanted:
            (dest / name).symlink_to(corpus / rec["file"])
            lines.append(line)
    meta = dest.parent / f"{dest.name}-metadata.jsonl"
    meta.write_text("\n".join(lines) + "\n")
    return dest, meta


@pytest.fixture(scope="session")
def subset_template(
    pg_admin_url: str, template_db: str, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """The SUBSET ingested once into a template database (nobody stays connected to it, so it
    can be cloned); its name and the data dir it was ingested with."""
    from ingest.pipeline import IngestPipeline
    from ingest.sources import pdf_dir_items

    name = "chatpapers_subset_template"
    ensure_database(pg_admin_url, name, template=template_db)
    base = tmp_path_factory.mktemp("subset")
    folder, meta = subset_folder(base / "pdfs", SUBSET)
    settings = make_settings(make_conninfo(pg_admin_url, dbname=name), base / "data")
    database = Database(settings)
    report = IngestPipeline(settings, database, embedder).run(pdf_dir_items(folder, meta))
    database.close()
    assert report.new == len(SUBSET), report
    return name, base / "data"


@pytest.fixture(scope="session")
def ingested(pg_admin_url: str, subset_template: tuple[str, Path]) -> Database:
    """The SUBSET, read-only: the server refuses any write, so a test that writes here fails."""
    template, data_dir = subset_template
    ensure_database(pg_admin_url, "chatpapers_subset", template=template)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute("ALTER DATABASE chatpapers_subset SET default_transaction_read_only = on")
    settings = make_settings(make_conninfo(pg_admin_url, dbname="chatpapers_subset"), data_dir)
    return Database(settings, migrate=False)


@pytest.fixture
def corpus_copy(pg_admin_url: str, subset_template: tuple[str, Path]) -> Iterator[Database]:
    """A writable copy of the SUBSET for this test alone."""
    template, data_dir = subset_template
    name = f"subset_{os.getpid()}_{next(_counter)}"
    ensure_database(pg_admin_url, name, template=template)
    database = Database(make_settings(make_conninfo(pg_admin_url, dbname=name), data_dir))
    yield database
    database.close()


def pick_papers(fake: FakeArxiv, ids: list[str]):
    """The fake's papers with these arXiv ids, in that order."""
    by_id = {p.paper_id: p for p in fake.papers}
    return [by_id[i] for i in ids]


def cli_env(settings: Settings, **extra: str) -> dict[str, str]:
    """Environment for running `chatpapers` as a real subprocess against the test database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATPAPERS_") and k != "DATABASE_URL"}
    env.update(
        DATABASE_URL=settings.database_url or "",
        CHATPAPERS_DATA_DIR=str(settings.data_dir),
        CHATPAPERS_ARXIV_API_URL=settings.arxiv_api_url,
        CHATPAPERS_ARXIV_PDF_URL=settings.arxiv_pdf_url,
        CHATPAPERS_ARXIV_DELAY_SECONDS=str(settings.arxiv_delay_seconds),
    )
    env.update(extra)
    return env


def chatpapers_exe() -> str:
    import shutil
    import sys

    exe = Path(sys.executable).with_name("chatpapers")
    return str(exe) if exe.exists() else (shutil.which("chatpapers") or "chatpapers")


def run_cli(env: dict[str, str], *args: str, timeout: int = 600, input: str | None = None):
    """Run `chatpapers ARGS` as a real subprocess (`input` on its stdin); returns the
    CompletedProcess."""
    import subprocess

    return subprocess.run(
        [chatpapers_exe(), *args], env=env, capture_output=True, text=True, timeout=timeout, input=input
    )


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory):
    """The real embedded model (loaded once per test run) and the settings that found it."""
    from agent.llm import local_available, resolve_llm

    if not local_available():
        pytest.fail("the local model is not installed: run scripts/setup.sh")
    settings = make_settings("postgresql://unused/x", tmp_path_factory.mktemp("llm"), llm="local")
    return resolve_llm(settings), settings


@pytest.fixture
def make_app(corpus_copy: Database, embedder: Embedder):
    """Build web apps over this test's copy of the subset. Settings overrides as keyword
    arguments; `model` is the chat model (None: CHATPAPERS_LLM's, through the composition root)."""
    from api.app import create_app
    from chatpapers.services import Services

    apps = []

    def build(model=None, database_url: str | None = None, **overrides):
        settings = corpus_copy.settings.model_copy(
            update={**overrides, "database_url": database_url or corpus_copy.url}
        )
        services = Services(settings)
        services.__dict__["embedder"] = embedder  # one embedder for the whole test run
        llm = services.llm if model is None else (lambda: model)
        app = create_app(settings, db=services.db, embedder=embedder, llm=llm)
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.state.chatpapers.turns.wait_idle(60)
        app.state.chatpapers.db.close()
