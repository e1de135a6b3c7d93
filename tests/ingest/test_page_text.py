"""Running headers, footers and page numbers are not part of a paper's text; words broken at line
ends are joined, compounds keep their hyphen."""

from __future__ import annotations

from pathlib import Path

import pypdf

from ingest.page_text import join_broken_words, running_text, strip_running_heads
from ingest.prepare import prepare_pdf


def _text(corpus_dir: Path, name: str) -> str:
    paper = prepare_pdf(corpus_dir / "pdfs" / name, 1000, 0)
    return " ".join(chunk.text for chunk in paper.chunks)


def test_the_running_title_is_gone_from_the_chunks(corpus_dir: Path) -> None:
    # RETRO prints its title at the top of all 43 pages: it stays once, where page 1 opens with it
    text = _text(corpus_dir, "2112.04426v1.pdf")
    assert text.count("Improving language models by retrieving from trillions of tokens") == 1
    assert text.startswith("Improving language models by retrieving from trillions of tokens")
    # ACM's odd and even headers and its footer, on every page but the first
    ng_scope = _text(corpus_dir, "2201.05281v2.pdf")
    assert "12:4 Yaxiong Xie and Kyle Jamieson" not in ng_scope
    assert "Proc. ACM Meas. Anal. Comput. Syst., Vol. 6" not in ng_scope


def test_venue_headers_and_page_numbers_are_gone(corpus_dir: Path) -> None:
    vit = corpus_dir / "pdfs/2010.11929v2.pdf"
    assert "Published as a conference paper at ICLR 2021" not in _text(corpus_dir, vit.name)
    pages = running_text([page.extract_text() for page in pypdf.PdfReader(vit).pages])
    # printed: "... instead of ResNet-based models used in prior works." then the page number "2"
    assert pages[1].endswith("ResNet-based models used in prior works.")
    assert all(not page.rstrip().endswith(f"\n{n}") for n, page in enumerate(pages, 1))


def test_a_header_between_the_halves_of_a_word_no_longer_splits_it(corpus_dir: Path) -> None:
    # "in-" ends a page, "terested" opens the next (after its header)
    assert "we are interested in" in _text(corpus_dir, "2202.00535v1.pdf")
    # the arXiv stamp sits between "collec-" and "tions"
    assert "large audio collections" in _text(corpus_dir, "1608.03417v1.pdf")


def test_compounds_broken_at_their_hyphen_keep_it(corpus_dir: Path) -> None:
    tableformer = _text(corpus_dir, "2203.00274v2.pdf")
    assert "state-of-theart" not in tableformer
    resnet = _text(corpus_dir, "1512.03385v1.pdf")
    assert "ResNet34" not in resnet and "CIFAR10" not in resnet


def test_join_broken_words_asks_the_paper_itself() -> None:
    page = (
        "The method dynami-\ncally adapts. We use meta-\nlearning, as meta-learning does, "
        "a state-of-the-\nart model, GPT-\n3 and pre- and post-training."
    )
    assert join_broken_words([page]) == [
        "The method dynamically adapts. We use meta-learning, as meta-learning does, "
        "a state-of-the-art model, GPT-3 and pre- and post-training."
    ]


def test_a_line_on_most_pages_is_a_header_but_the_title_on_page_one_stays() -> None:
    bodies = ["Introduction.", "Related work.", "Method, with a table:\n37", "Results.", "Conclusion."]
    pages = [f"A Paper Title\n{body}\n{n}" for n, body in enumerate(bodies, 1)]
    stripped = strip_running_heads(pages, keep="A Paper Title")
    assert stripped[0] == "A Paper Title\nIntroduction."
    assert stripped[1] == "Related work."
    assert stripped[2] == "Method, with a table:\n37"  # 37 is no page number: it stays
