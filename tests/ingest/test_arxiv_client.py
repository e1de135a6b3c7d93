"""The arXiv client against real recorded responses and a local server that misbehaves."""

from pathlib import Path

import httpx
import pytest

from ground.settings import Settings
from ingest.arxiv_api import ArxivClient, ArxivError, PoliteHttp, category_query, parse_feed
from tests.fake_arxiv import FakeArxiv


def _settings(fake: FakeArxiv, **kw) -> Settings:
    values = {"arxiv_api_url": fake.api_url, "arxiv_pdf_url": fake.pdf_url, "arxiv_delay_seconds": 0.0}
    values.update(kw)
    return Settings(_env_file=None, database_url="postgresql://unused/x", **values)


def test_parse_recorded_search_page(corpus_dir: Path) -> None:
    body = (corpus_dir / "atom/arxivpy2026_q_testing_s0_m10_bc5a6c384fe9.xml").read_bytes()
    total, entries = parse_feed(body)
    assert total == 214881 and len(entries) == 10
    first = entries[0]
    assert (first.paper_id, first.version) == ("2202.12139", 1)
    assert first.title.startswith("Testing Deep Learning Models")
    assert first.categories == ["cs.SE", "cs.LG"] and first.primary_category == "cs.SE"
    assert first.authors[:2] == ["Mohit Kumar Ahuja", "Arnaud Gotlieb"]
    assert first.published is not None and first.published.year == 2022


def test_parse_old_style_ids_and_empty_results(corpus_dir: Path) -> None:
    _, entries = parse_feed(
        (corpus_dir / "atom/arxivpy2026_id_hep-ex_0406020v1_s0_m100_84b15d66c0ce.xml").read_bytes()
    )
    assert (entries[0].paper_id, entries[0].version) == ("hep-ex/0406020", 1)
    total, entries = parse_feed(
        (corpus_dir / "atom/arxivpy2026_id_0000.0000_s0_m100_8b51d9633a68.xml").read_bytes()
    )
    assert total == 0 and entries == []


def test_category_query() -> None:
    assert category_query("cs") == "cat:cs.*"
    assert category_query("cs.CL") == "cat:cs.CL"
    with pytest.raises(ArxivError, match="not an arXiv category"):
        category_query("cs CL; drop")


def test_http_400_error_feed_becomes_a_clear_message(fake_arxiv: FakeArxiv) -> None:
    client = ArxivClient(_settings(fake_arxiv))
    with pytest.raises(ArxivError, match=r"incorrect id format for abc \(HTTP 400\)"):
        client.query(id_list=["abc"], max_results=100, sort_by="relevance")


def test_malformed_xml_is_reported(fake_arxiv: FakeArxiv) -> None:
    fake_arxiv.malformed = True
    with pytest.raises(ArxivError, match="malformed XML"):
        ArxivClient(_settings(fake_arxiv)).query(search_query="cat:cs.*")


def test_429_then_success_honours_retry_after(fake_arxiv: FakeArxiv) -> None:
    fake_arxiv.fail_next = [(429, {"Retry-After": "7"}), (503, {})]
    slept: list[float] = []
    settings = _settings(fake_arxiv, arxiv_delay_seconds=3.0)
    http = PoliteHttp(settings, sleep=slept.append, clock=lambda: 1000.0)
    total, entries = ArxivClient(settings, http).query(search_query="cat:cs.CV", max_results=5)
    assert total >= 5 and len(entries) == 5
    assert http.requests == 3
    # 7 s from Retry-After, then exponential backoff 3 * 2**1 = 6 s, plus the 3 s spacing each time.
    assert 7.0 in slept and 6.0 in slept
    assert slept.count(3.0) == 2


def test_gives_up_after_max_retries(fake_arxiv: FakeArxiv) -> None:
    fake_arxiv.fail_next = [(503, {})] * 5
    settings = _settings(fake_arxiv, arxiv_max_retries=2)
    http = PoliteHttp(settings, sleep=lambda s: None)
    with pytest.raises(ArxivError, match="after 3 attempts"):
        ArxivClient(settings, http).query(search_query="cat:cs.CV")


def test_requests_are_spaced_by_the_delay() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="ok"))
    settings = Settings(_env_file=None, arxiv_delay_seconds=3.0)
    http = PoliteHttp(settings, client=httpx.Client(transport=transport), sleep=sleep, clock=lambda: now[0])
    for advance in (0.0, 1.0, 5.0):
        now[0] += advance
        http.get("http://arxiv.invalid/api/query")
    # second request 1 s after the first waits 2 s more; the third came 5 s later and waits not at all
    assert slept == [2.0]


def test_user_agent_is_descriptive(fake_arxiv: FakeArxiv) -> None:
    http = PoliteHttp(_settings(fake_arxiv))
    assert http.client.headers["User-Agent"].startswith("chatpapers/")


def test_paging_walks_the_whole_category(fake_arxiv: FakeArxiv) -> None:
    client = ArxivClient(_settings(fake_arxiv, arxiv_page_size=7))
    entries = list(client.iter_category("cs"))
    assert len(entries) == len({e.paper_id for e in entries}) > 7
    assert all(any(c.startswith("cs.") for c in e.categories) for e in entries)
    updated = [e.updated for e in entries]
    assert updated == sorted(updated, reverse=True)
