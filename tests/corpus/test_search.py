"""Search over real ingested papers finds the paper a query describes."""

import pytest

from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder


@pytest.mark.parametrize(
    ("query", "paper_id"),
    [
        ("multi-head scaled dot-product attention", "1706.03762"),
        ("residual learning for very deep networks", "1512.03385"),
        ("an adaptive per-dimension learning rate method for gradient descent", "1212.5701"),
        ("image patches as tokens for a transformer image classifier", "2010.11929"),
    ],
)
def test_chunk_search_ranks_the_right_paper_first(
    ingested: Database, embedder: Embedder, query: str, paper_id: str
) -> None:
    with ingested.connect() as conn:
        hits = papers.search_chunks(conn, embedder.embed_query(query), k=5)
    assert hits[0].paper_id == paper_id
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_paper_search_uses_title_and_abstract(ingested: Database, embedder: Embedder) -> None:
    with ingested.connect() as conn:
        hits = papers.search_papers(
            conn, embedder.embed_query("knowledge distillation of an ensemble into a small model"), k=3
        )
    assert hits[0].paper_id == "1503.02531"


def test_search_within_one_paper(ingested: Database, embedder: Embedder) -> None:
    with ingested.connect() as conn:
        hits = papers.search_chunks(
            conn, embedder.embed_query("BLEU on WMT 2014"), k=3, paper_id="1706.03762"
        )
    assert hits and {h.paper_id for h in hits} == {"1706.03762"}
    assert any("BLEU" in h.text for h in hits)


def test_abstract_chunks_are_where_papers_say_what_their_abstract_says(ingested: Database) -> None:
    from corpus.papers import abstract_chunks

    with ingested.connect() as conn:
        found = abstract_chunks(conn, ["1512.03385", "1706.03762", "2401.99999"])
    assert set(found) == {"1512.03385", "1706.03762"}
    assert all(int(found[p].split("#")[1]) <= 2 for p in found), found


def test_concurrent_queries_are_embedded_together_and_correctly(embedder: Embedder) -> None:
    import threading

    import numpy as np

    texts = ["residual networks", "attention heads", "music transcription", "adaptive learning rates"]
    alone = {t: embedder.embed([t])[0] for t in texts}
    got: dict[str, list] = {t: [] for t in texts}
    threads = [threading.Thread(target=lambda t=t: got[t].append(embedder.embed_query(t))) for t in texts * 4]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in texts:
        assert len(got[t]) == 4 and all(np.array_equal(v, alone[t]) for v in got[t])


def test_a_vector_does_not_depend_on_the_texts_embedded_with_it(embedder: Embedder, corpus_dir) -> None:
    """Ingest embeds together whatever papers are extracted at that moment, so which texts share a
    call depends on timing: the same PDFs must still give the same vectors, bit for bit. (Batches
    of 32 texts gave this paper's chunks other roundings next to three other papers' chunks, and
    the local model, shown other scores, once cited another paper.)"""
    import numpy as np

    from ingest.prepare import prepare_pdf

    names = ["1212.5701v1.pdf", "1410.0342v4.pdf", "1411.3715v1.pdf", "1503.02531v1.pdf"]
    texts = [[c.text for c in prepare_pdf(corpus_dir / "pdfs" / n, 1000, 0).chunks][:40] for n in names]
    alone = embedder.embed(texts[0])
    together = embedder.embed([t for paper in texts for t in paper])
    assert len(alone) == 29
    assert np.array_equal(together[: len(alone)], alone)


def _ranked(db: Database, embedder: Embedder, query: str, hybrid: bool) -> list[str]:
    with db.connect() as conn:
        hits = papers.related_papers(
            conn, embedder.embed_query(query), k=5, lexical_text=query if hybrid else None
        )
    return [p.paper_id for p, _ in hits]


@pytest.mark.parametrize(
    ("query", "paper_id"),
    [
        ("Zeiler", "1212.5701"),  # an author's name: words a sentence vector does not know
        ("Stowell Plumbley", "1608.03417"),
    ],
)
def test_hybrid_search_finds_names_that_vectors_miss(
    ingested: Database, embedder: Embedder, query: str, paper_id: str
) -> None:
    assert _ranked(ingested, embedder, query, hybrid=True)[0] == paper_id
    assert _ranked(ingested, embedder, query, hybrid=False)[0] != paper_id  # what hybrid adds


def test_hybrid_keeps_what_dense_search_finds(ingested: Database, embedder: Embedder) -> None:
    for query, paper_id in [
        ("What problem does residual learning solve?", "1512.03385"),
        ("Which paper replaces recurrence with attention for translation?", "1706.03762"),
        ("How can a small model learn from the soft targets of a large one?", "1503.02531"),
    ]:
        assert _ranked(ingested, embedder, query, hybrid=True)[0] == paper_id
        assert _ranked(ingested, embedder, query, hybrid=False)[0] == paper_id


def test_lexical_query_keeps_topic_words_only() -> None:
    query = papers.lexical_query("Which papers in the corpus use ADADELTA, and how do the methods differ?")
    assert query is not None and "adadelta" in query.split(" | ")
    assert not {"papers", "corpus", "methods", "differ"} & set(query.split(" | "))
    assert papers.lexical_query("papers, methods, results?") is None


def test_every_paper_has_lexical_words_from_its_body(ingested: Database) -> None:
    with ingested.connect() as conn:
        # 'degradation' is in ResNet's body (introduction), not in its title or abstract
        found = conn.execute(  # a test of what the index holds reads it directly
            "SELECT array_agg(paper_id) FROM papers WHERE tsv @@ to_tsquery('english', 'degradation')"
        ).fetchone()[0]
    assert "1512.03385" in found


SUBSET_IDS = ["1706.03762", "1512.03385", "2010.11929", "1212.5701", "1503.02531", "2304.02623", "1608.03417"]


def test_a_name_past_the_indexed_opening_is_still_mentioned_when_a_paper_discusses_it(
    ingested: Database,
) -> None:
    # ResNet's detection appendix names the RPN 16 times, past the opening the lexical index
    # keeps; ViT names VisualBERT once (a citation), ResNet "VLFeat" once: not discussed
    with ingested.connect() as conn:
        assert papers.words_held(conn, SUBSET_IDS, ["RPN", "VisualBERT", "VLFeat"]) == {}
        assert papers.mention(conn, SUBSET_IDS, "RPN")
        assert papers.mention(conn, ["1512.03385"], "RPN")
        assert not papers.mention(conn, ["1706.03762", "2010.11929"], "RPN")
        assert not papers.mention(conn, SUBSET_IDS, "VisualBERT")
        assert not papers.mention(conn, SUBSET_IDS, "VLFeat")
        assert papers.mention(conn, SUBSET_IDS, "ADADELTA")  # in the index: title and abstract
