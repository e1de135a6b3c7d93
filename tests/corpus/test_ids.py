import pytest

from corpus.ids import ArxivId, find_arxiv_id, parse_arxiv_id, submitted_year


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2301.01234", ArxivId("2301.01234", None)),
        ("2301.01234v2", ArxivId("2301.01234", 2)),
        ("arXiv:2301.01234", ArxivId("2301.01234", None)),
        ("ARXIV:2301.01234v3", ArxivId("2301.01234", 3)),
        ("cs/0112017", ArxivId("cs/0112017", None)),
        ("cs.AI/0112017v1", ArxivId("cs/0112017", 1)),
        ("https://arxiv.org/abs/1706.03762v5", ArxivId("1706.03762", 5)),
        ("http://arxiv.org/abs/hep-ex/0406020v1", ArxivId("hep-ex/0406020", 1)),
        ("https://arxiv.org/pdf/1512.03385", ArxivId("1512.03385", None)),
        (" 0704.0001 ", ArxivId("0704.0001", None)),
    ],
)
def test_parse_arxiv_id_accepts_common_forms(text: str, expected: ArxivId) -> None:
    assert parse_arxiv_id(text) == expected


@pytest.mark.parametrize("text", ["abc", "1706.0376", "2301.01234v", "cs/011201", "", "12345.6789"])
def test_parse_arxiv_id_rejects_non_ids(text: str) -> None:
    assert parse_arxiv_id(text) is None


def test_find_arxiv_id_in_file_names() -> None:
    assert find_arxiv_id("excerpt__2103.15348v2__2pages.pdf") == ArxivId("2103.15348", 2)
    assert find_arxiv_id("2203.06947.pdf") == ArxivId("2203.06947", None)
    assert find_arxiv_id("imageonly__nonarxiv__docling-ocr-test.pdf") is None
    assert str(ArxivId("1706.03762", 5)) == "1706.03762v5"


@pytest.mark.parametrize(
    ("paper_id", "year"),
    [("2004.04906", 2020), ("0704.0001", 2007), ("1706.03762", 2017), ("cs/9912017", 1999),
     ("hep-th/0112017", 2001), ("local:ab12cd", None)],
)  # fmt: skip
def test_the_year_an_arxiv_id_was_given(paper_id: str, year: int | None) -> None:
    assert submitted_year(paper_id) == year
