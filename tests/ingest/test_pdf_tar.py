"""`--pdf-tar`: arXiv's bulk PDF archives, read member by member, into the real database; damaged
archives and members that are not PDFs are recorded or reported and the run goes on."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from ingest.pipeline import IngestPipeline
from ingest.sources import PdfTarSource, _id_from_name
from tests.conftest import cli_env, run_cli, subset_folder


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _archives(folder: Path, corpus_dir: Path) -> Path:
    """Four archives: a month's PDFs with a note beside them; a nested folder and a member named
    .pdf that is not one; an archive cut short inside its PDF; a file that is no tar at all."""
    pdfs = corpus_dir / "pdfs"
    folder.mkdir()
    _tar(
        folder / "arXiv_pdf_2311_001.tar",
        {
            "2311/1212.5701v1.pdf": (pdfs / "1212.5701v1.pdf").read_bytes(),
            "2311/README.txt": b"a note, not a paper\n",
            "2311/1503.02531v1.pdf": (pdfs / "1503.02531v1.pdf").read_bytes(),
        },
    )
    _tar(
        folder / "arXiv_pdf_2311_002.tar",
        {
            "deep/er/2304.02623v1.pdf": (pdfs / "2304.02623v1.pdf").read_bytes(),
            "2311/2311.99999v1.pdf": b"<html>not a PDF</html>",
        },
    )
    whole = _tar(folder / "whole.tmp", {"2311/1608.03417v1.pdf": (pdfs / "1608.03417v1.pdf").read_bytes()})
    (folder / "arXiv_pdf_2311_003.tar").write_bytes(whole.read_bytes()[:200_000])
    whole.unlink()
    (folder / "arXiv_pdf_2311_004.tar").write_bytes(b"this is not a tar archive at all\n" * 40)
    return folder


def test_archives_are_ingested_member_by_member_and_idempotently(
    settings: Settings, db: Database, embedder: Embedder, corpus_dir: Path, tmp_path: Path
) -> None:
    folder = _archives(tmp_path / "tars", corpus_dir)
    _, meta = subset_folder(tmp_path / "links", ["1212.5701v1.pdf", "1503.02531v1.pdf", "2304.02623v1.pdf"])
    source = PdfTarSource(folder, meta)
    assert [i.location.split(":", 1)[1] for i in source] == [
        "2311/1212.5701v1.pdf",
        "2311/1503.02531v1.pdf",
        "deep/er/2304.02623v1.pdf",
        "2311/2311.99999v1.pdf",
        "2311/1608.03417v1.pdf",
    ]
    problems = {p.location.removeprefix(f"{folder.resolve()}/"): p.reason for p in source.problems}
    assert problems == {
        "arXiv_pdf_2311_001.tar:2311/README.txt": "not a PDF, skipped",
        "arXiv_pdf_2311_003.tar": "archive truncated in 2311/1608.03417v1.pdf",
        "arXiv_pdf_2311_004.tar": "not a tar archive, or damaged before its first member",
    }

    report = IngestPipeline(settings, db, embedder).run(source)
    source.close()
    assert (report.new, report.skipped) == (3, 0)
    failed = {f.paper_id: f for f in report.failed}
    assert set(failed) == {"2311.99999", "1608.03417"}
    assert failed["2311.99999"].reason.startswith("not a PDF") and not failed["2311.99999"].retryable
    assert "unexpected end of data" in failed["1608.03417"].reason and failed["1608.03417"].retryable

    with db.connect() as conn:
        stored = conn.execute(
            "SELECT p.paper_id, p.title, p.source, p.source_sha256, p.n_chunks, p.pdf_url, i.location"
            " FROM papers p JOIN ingest_items i USING (paper_id) ORDER BY p.paper_id"
        ).fetchall()
    assert [r[0] for r in stored] == ["1212.5701", "1503.02531", "2304.02623"]
    for paper_id, title, src, sha, n_chunks, pdf_url, location in stored:
        member = next((corpus_dir / "pdfs").glob(f"{paper_id}v*.pdf"))
        assert sha == hashlib.sha256(member.read_bytes()).hexdigest()  # of the member's bytes
        assert src == "pdf-tar" and n_chunks > 0 and title
        assert pdf_url == f"https://arxiv.org/pdf/{member.stem}"
        assert location == f"{folder.resolve()}/" + (
            f"arXiv_pdf_2311_002.tar:deep/er/{member.name}"
            if paper_id == "2304.02623"
            else f"arXiv_pdf_2311_001.tar:2311/{member.name}"
        )
    assert stored[0][1] == "ADADELTA: An Adaptive Learning Rate Method"  # from --metadata

    embedded = embedder.texts_embedded
    again_source = PdfTarSource(folder, meta)
    again = IngestPipeline(settings, db, embedder).run(again_source)
    again_source.close()
    # the stored papers and the broken member are skipped; the cut-off member is tried again
    assert (again.new, again.updated, embedder.texts_embedded) == (0, 0, embedded)
    assert again.skip_reasons == {"unchanged": 3, "failed before": 1}
    assert [f.paper_id for f in again.failed] == ["1608.03417"]


def test_a_damaged_copy_of_a_stored_paper_does_not_mark_it_failed(
    settings: Settings, db: Database, embedder: Embedder, corpus_dir: Path, tmp_path: Path
) -> None:
    data = (corpus_dir / "pdfs/1212.5701v1.pdf").read_bytes()
    folder = tmp_path / "tars"
    folder.mkdir()
    _tar(folder / "a.tar", {"2311/1212.5701v1.pdf": data})
    whole = _tar(tmp_path / "b-whole.tar", {"2311/1212.5701v1.pdf": data})
    (folder / "b.tar").write_bytes(whole.read_bytes()[:100_000])
    report = IngestPipeline(settings, db, embedder).run(PdfTarSource(folder))
    # skipped as stored, or as in the same batch, depending on how far the first copy got
    assert (report.new, report.failed, report.skipped) == (1, [], 1)
    with db.connect() as conn:
        assert conn.execute("SELECT status FROM ingest_items").fetchall() == [("ok",)]


def test_ids_from_member_names() -> None:
    assert _id_from_name("2311.00001v1.pdf") == ("2311.00001", 1)
    assert _id_from_name("cs0112017v2.pdf") == ("cs/0112017", 2)  # the old scheme, as the tars name it
    assert _id_from_name("math.AG0101001.pdf") == ("math/0101001", None)
    assert _id_from_name("notes.pdf") is None


def test_cli_reports_archive_problems_and_user_mistakes_in_one_line(
    settings: Settings, corpus_dir: Path, tmp_path: Path
) -> None:
    env = cli_env(settings)
    folder = tmp_path / "tars"
    folder.mkdir()
    pdf = (corpus_dir / "pdfs/1212.5701v1.pdf").read_bytes()
    _tar(folder / "arXiv_pdf_2311_001.tar", {"2311/1212.5701v1.pdf": pdf})
    (folder / "arXiv_pdf_2311_002.tar").write_bytes(b"no tar")
    done = run_cli(env, "ingest", "--pdf-tar", str(folder), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "not a tar archive" in done.stdout and "arXiv_pdf_2311_002.tar" in done.stdout
    assert "│   1 │" in done.stdout  # one new paper in the summary table

    missing = run_cli(env, "ingest", "--pdf-tar", str(tmp_path / "nowhere"))
    assert missing.returncode == 1
    assert "error: PDF archive not found:" in missing.stderr and "nowhere" in missing.stderr
    assert "Traceback" not in missing.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    none = run_cli(env, "ingest", "--pdf-tar", str(empty))
    assert none.returncode == 1 and "no .tar archives in" in none.stderr and "Traceback" not in none.stderr

    both = run_cli(env, "ingest", "--pdf-tar", str(folder), "--pdf-dir", str(tmp_path))
    assert both.returncode == 2 and "one source at a time" in both.stderr
