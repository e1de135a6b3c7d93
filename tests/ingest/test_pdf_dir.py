"""`--pdf-dir`: metadata, file names and stamps for ids, category filter, edge files, idempotency."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import psycopg

from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest.pipeline import IngestPipeline
from ingest.sources import pdf_dir_items
from tests.conftest import cli_env, run_cli, subset_folder


def test_edge_folder_records_every_problem_and_exits_zero(settings: Settings, corpus_dir: Path) -> None:
    env = cli_env(settings)
    done = run_cli(env, "ingest", "--pdf-dir", str(corpus_dir / "edge"), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "encrypted PDF protected by a user password" in done.stdout
    status = json.loads(run_cli(env, "db", "status", "--json").stdout)
    assert status["failed"] == 2 and status["empty"] == 2
    reasons = {f["reason"].split(" (")[0] for f in status["recent_failures"]}
    assert reasons == {"encrypted PDF protected by a user password", "not a PDF"}
    with psycopg.connect(settings.database_url) as conn:
        ids = {r[0] for r in conn.execute("SELECT paper_id FROM papers")}
        rows = dict(conn.execute("SELECT paper_id, status FROM ingest_items").fetchall())
    # three files claim 2103.15348v2: the first is stored, the others are skipped as the same version
    assert {
        "2103.15348",
        "1903.10676",
        "2107.07170",
        "2305.03393",
        "1906.08632",
        "2206.01062",
        "2310.07875",
        "1412.6980",
    } == ids
    assert sum(1 for s in rows.values() if s == "empty") == 2
    assert all(pid.startswith("local:") for pid, s in rows.items() if s in ("failed", "empty"))


def test_metadata_category_filter_and_idempotency(
    settings: Settings, db: Database, embedder: Embedder, tmp_path: Path
) -> None:
    folder, meta = subset_folder(
        tmp_path / "mixed", ["2304.02623v1.pdf", "1609.09430v2.pdf", "0908.0054v1.pdf"]
    )
    items = pdf_dir_items(folder, meta, categories=("cs",))
    assert sorted(i.meta.paper_id for i in items) == ["1609.09430", "2304.02623"]  # astro-ph left out
    first = IngestPipeline(settings, db, embedder).run(items)
    assert first.new == 2
    with db.connect() as conn:
        title, version, source = conn.execute(
            "SELECT title, version, source FROM papers WHERE paper_id = '1609.09430'"
        ).fetchone()
    assert version == 2 and source == "pdf-dir" and title
    embedded = embedder.texts_embedded
    again = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder, meta, categories=("cs",)))
    assert (again.new, again.updated, again.skipped, embedder.texts_embedded) == (0, 0, 2, embedded)


def test_ids_from_stamp_or_a_stable_local_id(
    settings: Settings, db: Database, embedder: Embedder, corpus_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "unnamed"
    folder.mkdir()
    shutil.copy(corpus_dir / "pdfs/2304.02623v1.pdf", folder / "some paper.pdf")  # stamp on page 1
    shutil.copy(corpus_dir / "pdfs/2203.06947.pdf", folder / "no-stamp.pdf")  # no stamp anywhere
    report = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder))
    assert report.new == 2
    with db.connect() as conn:
        ids = sorted(r[0] for r in conn.execute("SELECT paper_id FROM papers"))
        title = conn.execute("SELECT title FROM papers WHERE paper_id LIKE 'local:%'").fetchone()[0]
    assert ids[0] == "2304.02623" and ids[1].startswith("local:") and len(ids[1]) == len("local:") + 16
    assert title.startswith("XYLayoutLM")
    again = IngestPipeline(settings, db, embedder).run(pdf_dir_items(folder))
    assert again.new == 0 and again.skipped == 2


def test_abstracts_from_metadata_are_stored_without_ligatures(ingested: Database) -> None:
    # the shared corpus's metadata.jsonl writes "difﬁcult" and "classiﬁcation" (copied from the
    # PDFs): stored so, no query word met them in the lexical index or in the paper's vector
    with ingested.connect() as conn:
        for paper_id in ("1512.03385", "1212.5701", "2010.11929"):
            abstract = papers.get_paper(conn, paper_id).abstract or ""
            assert abstract and not re.search("[\ufb00-\ufb06]", abstract), abstract
        assert "difficult" in (papers.get_paper(conn, "1512.03385").abstract or "")
