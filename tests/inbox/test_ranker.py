"""The ranker and the library parser as plain functions: what they learn, and what they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inbox import library, ranker


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _cluster(rng: np.random.Generator, centre: np.ndarray, n: int, spread: float = 0.6) -> np.ndarray:
    return _unit(centre + spread * rng.standard_normal((n, ranker.DIM)) / np.sqrt(ranker.DIM))


def test_a_few_likes_among_a_thousand_random_papers_are_learned() -> None:
    rng = np.random.default_rng(0)
    interest, dislike = _unit(rng.standard_normal((2, ranker.DIM)))
    liked = _cluster(rng, interest, 4)
    disliked = _cluster(rng, dislike, 2)
    random = _unit(rng.standard_normal((ranker.RANDOM_NEGATIVES, ranker.DIM)))
    weights = ranker.fit(ranker.examples(liked, disliked, random))
    assert weights is not None and weights.shape == (ranker.DIM + 1,)
    fresh_liked, fresh_disliked = _cluster(rng, interest, 20), _cluster(rng, dislike, 20)
    others = _unit(rng.standard_normal((200, ranker.DIM)))
    s_like, s_dislike, s_other = (ranker.scores(weights, x) for x in (fresh_liked, fresh_disliked, others))
    # every new paper like the liked ones beats every unrelated paper, which beat the disliked kind
    assert s_like.min() > s_other.max()
    assert np.median(s_other) > np.median(s_dislike)


def test_without_class_balance_four_likes_would_be_drowned() -> None:
    data = ranker.examples(np.ones((4, ranker.DIM)), np.zeros((0, ranker.DIM)), np.ones((1000, ranker.DIM)))
    assert data.counts() == (4, 1000)
    assert (
        ranker.fit(ranker.examples(np.zeros((0, ranker.DIM)), np.zeros((0, ranker.DIM)), data.vectors))
        is None
    )


def test_topics_count_only_until_enough_likes() -> None:
    rng = np.random.default_rng(1)
    topics = _unit(rng.standard_normal((3, ranker.DIM)))
    random = _unit(rng.standard_normal((50, ranker.DIM)))
    few = ranker.examples(_unit(rng.standard_normal((2, ranker.DIM))), random[:0], random, topics=topics)
    many = ranker.examples(
        _unit(rng.standard_normal((ranker.TOPIC_COLD_START, ranker.DIM))), random[:0], random, topics=topics
    )
    assert few.counts()[0] == 2 + 3 and many.counts()[0] == ranker.TOPIC_COLD_START
    implicit = ranker.examples(random[:1], random[:0], random, implicit=random[:3])
    assert list(implicit.weights[:4]) == [
        1.0,
        ranker.IMPLICIT_WEIGHT,
        ranker.IMPLICIT_WEIGHT,
        ranker.IMPLICIT_WEIGHT,
    ]


def test_every_user_in_one_product_equals_one_at_a_time() -> None:
    rng = np.random.default_rng(2)
    weights = rng.standard_normal((30, ranker.DIM + 1)).astype(np.float32)
    papers = _unit(rng.standard_normal((500, ranker.DIM)))
    together = ranker.scores(weights, papers)
    assert together.shape == (30, 500)
    for u in (0, 17, 29):
        np.testing.assert_allclose(together[u], ranker.scores(weights[u], papers), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@article{a, title={X}, eprint={1706.03762}, archivePrefix={arXiv}}", "1706.03762"),
        ("@misc{a, title={X}, doi={10.48550/arXiv.2010.11929}}", "2010.11929"),
        ("@misc{a, title={X}, url={https://arxiv.org/abs/1512.03385v2}}", "1512.03385"),
        ("@article{a, title={X}, journal={arXiv preprint arXiv:1608.03417}}", "1608.03417"),
        ("@article{a, title={X}, eprint={cs/0112017}}", "cs/0112017"),
        ("@article{a, title={X}, doi={10.1145/3292500.3330701}}", None),
        ("TY  - JOUR\nTI  - X\nDO  - 10.48550/arXiv.1706.03762\nER  - \n", "1706.03762"),
        ("TY  - JOUR\nTI  - X\nUR  - https://arxiv.org/pdf/2304.02623v1\nER  - \n", "2304.02623"),
    ],
)
def test_arxiv_ids_from_the_usual_fields(text: str, expected: str | None) -> None:
    _, entries, unreadable = library.parse(text)
    assert [e.arxiv_id for e in entries] == [expected] and unreadable == 0


def test_a_title_too_short_to_say_which_paper_is_not_matched_by_title() -> None:
    _, entries, _ = library.parse("@misc{a, title={Introduction}}\n@misc{b, title={Deep Residual Learning}}")
    assert [e.key for e in entries] == [None, "deepresiduallearning"]


def test_titles_match_whatever_the_latex() -> None:
    assert library.title_key("Attention is {All} you Need") == library.title_key("Attention Is All You Need")
    assert library.title_key(r"{\em Deep} Residual Learning") == library.title_key("Deep residual learning")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain words",
        "@article{broken, title={x",
        "TY  - JOUR\nTI  - no end\n",
        "@@@ {{{ }}}",
        "x" * 100,
        "@misc{a,}\n" * (library.MAX_ENTRIES + 1),  # refused before the parser spends a minute on it
    ],
)
def test_what_is_not_a_library_says_so(text: str) -> None:
    with pytest.raises(library.LibraryError):
        library.parse(text)


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list('@{}(),="TY -ER\nabc0123.:/\\%')), max_size=300)
    | st.text(max_size=200)
)
def test_any_text_is_read_or_refused_with_a_reason(text: str) -> None:
    try:
        kind, entries, _ = library.parse(text)
    except library.LibraryError as exc:
        assert str(exc)
    else:
        assert kind in ("bibtex", "ris") and entries


def test_the_feed_is_xml_whatever_the_papers_hold() -> None:
    from datetime import UTC, datetime

    from defusedxml import ElementTree

    from inbox.feed import atom
    from inbox.listing import InboxPage, InboxPaper, Why

    odd = "Title <b>&amp; \x0b\x00 \ud800 \ufffe ]]> \u202e"
    paper = InboxPaper(
        paper_id="2401.00001",
        url="https://arxiv.org/abs/2401.00001",
        title=odd,
        authors=[odd],
        published=None,
        arrived=datetime(2026, 11, 25, tzinfo=UTC),
        categories=['cs.LG"/><x'],
        abstract_head=odd,
        score=1.0,
        why=Why(kind="topic", text=f"near your topic “{odd}”", ref=odd),
    )
    page = InboxPage(
        since=datetime(2026, 11, 18, tzinfo=UTC), until=None, ranked_by="topics", total=1, papers=[paper]
    )
    doc = ElementTree.fromstring(atom(page, "owner", "http://x/feeds/t", "http://x/"))
    entry = doc.find("{http://www.w3.org/2005/Atom}entry")
    assert entry.find("{http://www.w3.org/2005/Atom}title").text.startswith("Title <b>&amp; ")
    assert entry.find("{http://www.w3.org/2005/Atom}category").get("term") == 'cs.LG"/><x'
