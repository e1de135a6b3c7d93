"""Each tool against the real database with corpus papers ingested (see conftest.SUBSET)."""

from __future__ import annotations

from datetime import date

import pytest

from agent.coverage import defines
from agent.llm.base import Completion
from agent.tools import TOOLS_BY_NAME, ToolContext, ToolError
from agent.tools.base import parse_chunk_id, resolve_paper_id
from agent.tools.context import ChunkInput, PriorContext, SubsequentContext
from agent.tools.paper import (
    AskPaperQuestion,
    FullPaperSummary,
    InformationFromPaper,
    InformationInput,
    QuestionInput,
    SummaryInput,
)
from agent.tools.search import RecentInput, RecentPapers, Search, SearchInput, with_defining, with_titled
from corpus import papers, summaries
from corpus.db import Database
from corpus.embedder import Embedder


class EchoModel:
    """A stand-in model that shows what it was asked (the tools' LLM plumbing, not the LLM)."""

    name = "echo"

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str]] = []
        self.roles: list[str] = []

    def chat(self, messages, json_schema=None, max_tokens=512, on_token=None, role="agent") -> Completion:
        self.prompts.append((messages[0].content, messages[-1].content))
        self.roles.append(role)
        return Completion(text=f"echo {len(self.prompts)}")


@pytest.fixture
def ctx(ingested: Database, embedder: Embedder) -> ToolContext:
    return ToolContext(connect=ingested.pooled, embedder=embedder, llm=EchoModel())


def test_the_seven_tools_have_schemas_and_descriptions() -> None:
    assert sorted(TOOLS_BY_NAME) == sorted(
        [
            "search",
            "get_recent_papers",
            "get_full_paper_summary",
            "ask_paper_question",
            "get_information_from_paper",
            "get_prior_context",
            "get_subsequent_context",
        ]
    )
    for tool in TOOLS_BY_NAME.values():
        assert len(tool.description) > 40
        assert tool.input_model.model_json_schema()["properties"]
    assert "often suffices" in TOOLS_BY_NAME["search"].description
    assert "overview of a whole paper" in TOOLS_BY_NAME["get_full_paper_summary"].description


@pytest.mark.parametrize(
    "text", ["1706.03762", "1706.03762v5", "arXiv:1706.03762", "https://arxiv.org/abs/1706.03762v2"]
)
def test_paper_ids_in_any_form(text: str) -> None:
    assert resolve_paper_id(text) == "1706.03762"
    assert resolve_paper_id("cs/0112017v1") == "cs/0112017"
    with pytest.raises(ToolError, match="not an arXiv id"):
        resolve_paper_id("attention paper")
    assert parse_chunk_id("arXiv:1706.03762v5#3") == ("1706.03762", 3)
    with pytest.raises(ToolError, match="not a chunk id"):
        parse_chunk_id("1706.03762")


def test_search_finds_papers_with_metadata(ctx: ToolContext) -> None:
    result = Search().run(ctx, SearchInput(query="residual learning for very deep networks", k=3))
    assert result.paper_ids()[0] == "1512.03385"
    observation = result.to_observation()
    assert "[arXiv:1512.03385] Deep Residual Learning for Image Recognition" in observation
    assert "Kaiming He" in observation and "2015-12-10" in observation


def test_a_paper_that_introduces_an_asked_name_leads_when_none_listed_mentions_it(ctx: ToolContext) -> None:
    # the bird-detection survey introduces voice activity detection (VAD); of the subset, only it
    question = "Which VAD methods are used before the classifiers?"
    with ctx.connect() as conn:
        transformer = papers.get_paper(conn, "1706.03762")
        survey = papers.get_paper(conn, "1608.03417")
        vector = ctx.embedder.embed_query(question)
        listed = with_defining(conn, vector, SearchInput(query=question, k=1), True, [(transformer, 0.5)])
        assert [p.paper_id for p, _ in listed] == ["1608.03417"]
        # a listing that mentions the name is left as it is
        kept = with_defining(conn, vector, SearchInput(query=question, k=2), True, [(survey, 0.5)])
        assert [p.paper_id for p, _ in kept] == ["1608.03417"]
        # a name no paper introduces leaves the listing as it is too
        other = "Which YOLO variants are used before the classifiers?"
        vector = ctx.embedder.embed_query(other)
        alone = with_defining(conn, vector, SearchInput(query=other, k=1), True, [(transformer, 0.5)])
        assert [p.paper_id for p, _ in alone] == ["1706.03762"]


def test_the_papers_whose_titles_a_query_quotes_lead_the_listing(ctx: ToolContext) -> None:
    with ctx.connect() as conn:
        vit = papers.get_paper(conn, "2010.11929")
        resnet = papers.get_paper(conn, "1512.03385")
        hits = [(vit, 0.7), (resnet, 0.4)]
        quoted = "In 'Attention Is All You Need', what value of label smoothing was used?"
        # quoted as written or with other quotes, capitals and spacing; not listed before: first,
        # at the best score, and the listing keeps its length
        for query in (quoted, "What does “attention is all  you need” use for label smoothing?"):
            assert [(p.paper_id, s) for p, s in with_titled(conn, query, hits)] == [
                ("1706.03762", 0.7),
                ("2010.11929", 0.7),
            ]
        # listed further down: moved up, with its own score
        resnet_quoted = "Is 'Deep Residual Learning for Image Recognition' deep?"
        assert [(p.paper_id, s) for p, s in with_titled(conn, resnet_quoted, hits)] == [
            ("1512.03385", 0.4),
            ("2010.11929", 0.7),
        ]
        # a quoted head before a colon ("An Image is Worth 16x16 Words: Transformers for ..."), and
        # two titles quoted: in the query's order, the listing no longer than it was
        transformer = papers.get_paper(conn, "1706.03762")
        head = "Does 'An Image is Worth 16x16 Words' beat 'Attention Is All You Need'?"
        assert [p.paper_id for p, _ in with_titled(conn, head, [(transformer, 0.5), (resnet, 0.4)])] == [
            "2010.11929",
            "1706.03762",
        ]
        # a quoted term, a title not in the corpus or unquoted words leave the listing as it is
        for query in (
            "Is ViT's 'class token' needed?",
            "In 'Attention Is Not All You Need', what changed?",
            "In Attention Is All You Need, what value of label smoothing was used?",
        ):
            assert with_titled(conn, query, hits) == hits
    # and through the search tool
    found = Search().run(ctx, SearchInput(query=quoted, k=3))
    assert found.paper_ids()[0] == "1706.03762" and len(found.papers) == 3


def test_the_paper_that_introduces_a_name_leads_when_the_listing_only_mentions_it(ctx: ToolContext) -> None:
    """ViT names ResNet 57 times (its baseline) and introduces it nowhere; the ResNet paper does
    ("residual nets (ResNets)"). Asked about ResNet alone, the paper that introduces it leads; asked
    about both, the listing that introduces ViT stays as it is."""
    with ctx.connect() as conn:
        vit = papers.get_paper(conn, "2010.11929")
        question = "How deep was the deepest ResNet trained on ImageNet?"
        vector = ctx.embedder.embed_query(question)
        listed = with_defining(conn, vector, SearchInput(query=question, k=2), True, [(vit, 0.5)])
        assert [p.paper_id for p, _ in listed] == ["1512.03385", "2010.11929"]
        both = "How does ViT compare with ResNet when there is little training data?"
        vector = ctx.embedder.embed_query(both)
        kept = with_defining(conn, vector, SearchInput(query=both, k=2), True, [(vit, 0.5)])
        assert [p.paper_id for p, _ in kept] == ["2010.11929"]


@pytest.mark.parametrize(
    ("text", "name", "introduced"),
    [
        ("Our Dense Passage Retriever (DPR) uses in-batch negatives.", "DPR", True),
        ("the least recently used access (LRUA) module", "LRUA", True),
        ("Bidirectional Encoder Representations from Transformers (BERT)", "BERT", True),
        ("similar to Zhang et al. (2020) (SAT)", "SAT", False),
        ("the Passage Retriever (DPR)", "DPR", False),
        ("we compare with YOLO and DPR", "DPR", False),
        ("our Retrieval-Enhanced Transformer (RETRO) obtains", "RETRO", True),
        ("the Retrieval Transformer (RETRO)", "RETRO", False),
        ("Some Enhanced Retrieval Transformer (RETRO)", "RETRO", False),
    ],
)
def test_a_name_is_introduced_by_the_words_its_capitals_begin(text: str, name: str, introduced: bool) -> None:
    assert defines(text, name) is introduced


def test_recent_papers_are_newest_first_and_respect_since(ctx: ToolContext) -> None:
    result = RecentPapers().run(ctx, RecentInput(query="transformers", k=5, since=date(2017, 1, 1)))
    dates = [p.published for p in result.papers]
    assert dates and all(d is not None and d.year >= 2017 for d in dates)
    assert dates == sorted(dates, reverse=True)


def test_information_from_paper_returns_chunk_ids(ctx: ToolContext) -> None:
    result = InformationFromPaper().run(
        ctx, InformationInput(paper_id="arXiv:1706.03762v5", query="BLEU score on WMT 2014", k=3)
    )
    assert len(result.chunks) == 3 and all(c.paper_id == "1706.03762" for c in result.chunks)
    assert "1706.03762#" in result.to_observation() and "BLEU" in result.to_observation()


def test_unknown_paper_is_a_tool_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="not in the corpus; use `search`"):
        InformationFromPaper().run(ctx, InformationInput(paper_id="2401.99999", query="x"))


def test_ask_paper_question_passes_the_passages_to_the_model(ctx: ToolContext) -> None:
    result = AskPaperQuestion().run(
        ctx, QuestionInput(paper_id="1512.03385", question="What problem does residual learning solve?", k=2)
    )
    system, user = ctx.llm.prompts[-1]  # type: ignore[union-attr]
    assert "only the passages" in system and "What problem does residual learning solve?" in user
    assert len(result.passages) == 2 and all(c in user for c in result.passages)
    assert result.answer == "echo 1"


def test_summary_is_a_bounded_overview_without_a_model(ctx: ToolContext) -> None:
    summary = FullPaperSummary().run(ctx, SummaryInput(paper_id="1512.03385"))
    assert not summary.cached and ctx.llm.prompts == []  # type: ignore[union-attr]
    assert summary.summary.startswith("Abstract: Deeper neural networks are more di")
    assert "Introduction:" in summary.summary and len(summary.summary) <= 3 * 820


def test_a_summary_written_ahead_of_time_wins(corpus_copy: Database, embedder: Embedder) -> None:
    ctx = ToolContext(connect=corpus_copy.pooled, embedder=embedder, llm=EchoModel())
    with corpus_copy.connect() as conn:
        paper = papers.get_paper(conn, "1503.02531")
        assert paper is not None
        summaries.put_summary(conn, paper.paper_id, paper.version, "echo", "Distillation, summarised.")
        conn.commit()
    summary = FullPaperSummary().run(ctx, SummaryInput(paper_id="1503.02531"))
    assert summary.cached and summary.summary == "Distillation, summarised."


def test_neighbours_and_the_edges_of_a_paper(ctx: ToolContext) -> None:
    with ctx.connect() as conn:
        last = conn.execute("SELECT n_chunks - 1 FROM papers WHERE paper_id = '1512.03385'").fetchone()[0]
    nxt = SubsequentContext().run(ctx, ChunkInput(chunk_id="1512.03385#0"))
    assert nxt.chunk.seq == 1 and nxt.to_observation().startswith("Next passage (1512.03385#1")
    prev = PriorContext().run(ctx, ChunkInput(chunk_id="1512.03385#2"))
    assert prev.chunk.seq == 1
    with pytest.raises(ToolError, match="is the first chunk"):
        PriorContext().run(ctx, ChunkInput(chunk_id="1512.03385#0"))
    with pytest.raises(ToolError, match="is the last chunk"):
        SubsequentContext().run(ctx, ChunkInput(chunk_id=f"1512.03385#{last}"))
    with pytest.raises(ToolError, match="there is no chunk"):
        SubsequentContext().run(ctx, ChunkInput(chunk_id="1512.03385#99999"))
