"""Every hostile file in ../shared/corpus/edge gets a status and a reason; nothing raises."""

from pathlib import Path

import pytest

from ingest.prepare import prepare_pdf

EXPECTED = {
    "blankpages__2103.15348v2__4pages.pdf": ("ok", None),
    "encrypted-emptypw__2103.15348v2__2pages.pdf": ("ok", None),
    "encrypted-userpw__unknown-nonarxiv.pdf": ("failed", "password"),
    "excerpt-1page-nostamp__1903.10676.pdf": ("ok", None),
    "excerpt-1page-nostamp__2107.07170.pdf": ("ok", None),
    "excerpt-1page-nostamp__2305.03393v1-pg9.pdf": ("ok", None),
    "excerpt-1page__1906.08632v2__page1.pdf": ("ok", None),
    "excerpt-ligatures__2206.01062v1__4of9pages.pdf": ("ok", None),
    "excerpt__2103.15348v2__2pages.pdf": ("ok", None),
    "excerpt__2310.07875v1__first7pages.pdf": ("ok", None),
    "imageonly-rotated90__nonarxiv__docling-ocr-test.pdf": ("empty", "no extractable text"),
    "imageonly__nonarxiv__docling-ocr-test.pdf": ("empty", "no extractable text"),
    "not-a-pdf__git-symlink-stub.pdf": ("failed", "not a PDF"),
    # First KiB zeroed (no %PDF header) but body and trailer intact: readable, so it is kept.
    "notext-first-pages__1412.6980v9.pdf": ("ok", None),
}


def test_every_edge_file_is_covered(corpus_dir: Path) -> None:
    assert sorted(p.name for p in (corpus_dir / "edge").iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_edge_pdf_status_and_reason(corpus_dir: Path, name: str) -> None:
    status, reason_part = EXPECTED[name]
    paper = prepare_pdf(corpus_dir / "edge" / name, 1000, 0)
    assert paper.status == status, paper.reason
    if reason_part:
        assert reason_part in (paper.reason or "")
        assert not paper.chunks
    else:
        assert paper.chunks and all(c.text.strip() for c in paper.chunks)


def test_stamp_gives_id_version_and_category(corpus_dir: Path) -> None:
    paper = prepare_pdf(corpus_dir / "edge/excerpt-ligatures__2206.01062v1__4of9pages.pdf", 1000, 0)
    assert paper.stamp is not None
    assert (paper.stamp.paper_id, paper.stamp.version, paper.stamp.category) == ("2206.01062", 1, "cs.CV")
    assert all("ﬁ" not in c.text for c in paper.chunks)  # ligatures normalised


def test_truncated_pdf_is_a_failure_not_a_crash(corpus_dir: Path, tmp_path: Path) -> None:
    data = (corpus_dir / "pdfs/1212.5701v1.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 3])
    paper = prepare_pdf(cut, 1000, 0)
    assert paper.status == "failed" and not paper.chunks
    assert (paper.reason or "").startswith("unreadable or truncated PDF")
