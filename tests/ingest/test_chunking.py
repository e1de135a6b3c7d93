import itertools
from pathlib import Path

import pytest

from ingest.chunking import chunk_pages, clean_page, split_text
from ingest.prepare import prepare_pdf


def test_clean_page_fixes_ligatures_hyphens_and_removes_the_arxiv_stamp() -> None:
    raw = "The method dynami-\ncally adapts.\nIt is ﬁne.\narXiv:1706.03762v5  [cs.CL]  6 Dec 2017"
    assert clean_page(raw) == "The method dynamically adapts. It is fine."


def test_split_text_keeps_order_and_covers_all_words() -> None:
    words = [f"w{i}" for i in range(3000)]
    text = " ".join(words)
    spans = split_text(text, size=1000)
    assert all(len(piece) <= 1000 for _, piece in spans)
    assert all(len(piece) >= 600 for _, piece in spans[:-1])
    assert " ".join(piece for _, piece in spans).split() == words
    starts = [start for start, _ in spans]
    assert starts == sorted(starts)
    assert all(text[start : start + len(piece)] == piece for start, piece in spans)


def test_split_prefers_sentence_ends() -> None:
    sentence = "This sentence has exactly fifty characters in it. "
    spans = split_text(sentence * 60, size=1000)
    assert all(piece.endswith(".") for _, piece in spans)


def test_overlap_repeats_the_tail_of_the_previous_chunk() -> None:
    text = " ".join(f"token{i}" for i in range(1000))
    spans = split_text(text, size=500, overlap=100)
    for (_, a), (_, b) in itertools.pairwise(spans):
        assert b.split()[0] in a.split()[-20:]
    with pytest.raises(ValueError):
        split_text(text, size=100, overlap=100)


def test_chunks_know_their_page(corpus_dir: Path) -> None:
    paper = prepare_pdf(corpus_dir / "pdfs/1512.03385v1.pdf", 1000, 0)
    assert paper.status == "ok" and paper.n_pages == 12
    assert [c.seq for c in paper.chunks] == list(range(len(paper.chunks)))
    pages = [c.page for c in paper.chunks]
    assert pages[0] == 1 and pages[-1] == 12 and pages == sorted(pages)
    assert "Deep Residual Learning" in paper.chunks[0].text
    assert all("arXiv:1512.03385" not in c.text for c in paper.chunks)


def test_blank_pages_produce_no_empty_chunks() -> None:
    chunks = chunk_pages(["", "Some text on page two.", "   ", "More on four."], size=1000)
    assert len(chunks) == 1 and chunks[0].page == 2
    assert chunks[0].text == "Some text on page two.\n\nMore on four."
