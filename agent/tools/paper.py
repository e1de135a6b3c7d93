"""Tools that read inside one paper: raw chunks, a question answered from its chunks, a summary."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agent.llm.base import complete
from agent.reading import (
    Sentence,
    abstract_sentences,
    asks_who,
    authors_sentence,
    best_passages,
    own_names,
    readable_abstract,
    select_sentences,
)
from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, resolve_paper_id, shorten
from corpus import papers, summaries
from corpus.ids import chunk_id
from corpus.models import ChunkHit, PaperRecord


def known_paper(ctx: ToolContext, paper_id: str) -> PaperRecord:
    with ctx.connect() as conn:
        paper = papers.get_paper(conn, resolve_paper_id(paper_id))
    if paper is None:
        raise ToolError(f"paper {paper_id} is not in the corpus; use `search` to find papers that are")
    if paper.n_chunks == 0:
        raise ToolError(f"paper {paper.paper_id} has no full text stored (metadata only); use its abstract")
    return paper


class InformationInput(BaseModel):
    paper_id: str = Field(description="arXiv id of the paper, e.g. 1706.03762.")
    query: str = Field(description="What to look for in the paper.")
    k: int = Field(4, ge=1, le=12, description="How many passages.")
    sentences: int = Field(
        0, ge=0, le=12, description="0: whole passages; N: only the N sentences that best answer the query."
    )
    abstract: int = Field(
        0, ge=0, le=6, description="With sentences: also the N abstract sentences that best answer the query."
    )


class QuestionInput(BaseModel):
    paper_id: str = Field(description="arXiv id of the paper, e.g. 1706.03762.")
    question: str = Field(description="The question to answer from the paper's text.")
    k: int = Field(4, ge=1, le=12, description="How many passages to read; increase it and retry if needed.")


class SummaryInput(BaseModel):
    paper_id: str = Field(description="arXiv id of the paper, e.g. 1706.03762.")


class Passages(ToolResult):
    paper: PaperRecord
    chunks: list[ChunkHit]
    # narrow reading: the passages' sentences that best answer the query, in reading order
    sentences: list[Sentence] = Field(default_factory=list)

    def to_observation(self) -> str:
        head = f"From [arXiv:{self.paper.paper_id}] {self.paper.title}:"
        if self.sentences:
            return "\n".join([head, *(f"[{n}] {s.text}" for n, s in enumerate(self.sentences, 1))])
        body = [f"({c.chunk_id}, page {c.page}) {shorten(c.text, 900)}" for c in self.chunks]
        return "\n".join([head, *body])

    def records(self) -> list[PaperRecord]:
        return [self.paper]

    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in sorted(self.chunks, key=lambda c: -c.score)]

    def quotable(self) -> list[tuple[str, str]]:
        # narrowly read: what may be quoted is what was chosen as answering, not the whole passage
        if self.sentences:
            return [(s.paper_id, s.text) for s in self.sentences]
        return [(c.paper_id, c.text) for c in self.chunks]


class Answer(ToolResult):
    paper: PaperRecord
    answer: str
    passages: list[str]  # chunk ids, most relevant first
    read: list[ChunkHit] = Field(default_factory=list)  # the passages themselves, as the model read them

    def to_observation(self) -> str:
        return (
            f"Answer from [arXiv:{self.paper.paper_id}] {self.paper.title} "
            f"(passages {', '.join(self.passages)}): {self.answer}"
        )

    def records(self) -> list[PaperRecord]:
        return [self.paper]

    def chunk_ids(self) -> list[str]:
        return self.passages

    def quotable(self) -> list[tuple[str, str]]:
        return [(c.paper_id, c.text) for c in self.read]


class Summary(ToolResult):
    paper: PaperRecord
    summary: str
    cached: bool

    def to_observation(self) -> str:
        return f"Summary of [arXiv:{self.paper.paper_id}] {self.paper.title}: {self.summary}"

    def records(self) -> list[PaperRecord]:
        return [self.paper]

    def quotable(self) -> list[tuple[str, str]]:
        # the overview is the paper's own words; a cached summary was written by a model
        return [] if self.cached else [(self.paper.paper_id, self.summary)]


class InformationFromPaper(Tool[InformationInput, Passages]):
    name = "get_information_from_paper"
    description = (
        "The passages of one paper most related to a query, with their chunk ids "
        "(use get_prior_context / get_subsequent_context with a chunk id to read around it)."
    )
    input_model = InformationInput

    def run(self, ctx: ToolContext, args: InformationInput) -> Passages:
        paper = known_paper(ctx, args.paper_id)
        vector = ctx.embedder.embed_query(args.query)  # before taking a pooled connection
        if not args.sentences:
            with ctx.connect() as conn:
                hits = papers.search_chunks(conn, vector, k=args.k, paper_id=paper.paper_id)
            return Passages(paper=paper, chunks=sorted(hits, key=lambda c: c.seq))
        with ctx.connect() as conn:  # every chunk of the paper with its similarity: exact, small
            every = papers.search_chunks(conn, vector, k=paper.n_chunks, paper_id=paper.paper_id)
            # where an abstract sentence's source card points
            at = papers.abstract_chunks(conn, [paper.paper_id]).get(paper.paper_id) if args.abstract else None
        passages = best_passages(args.query, every, args.k)
        # The abstract's sentences weighed with the body's lost on the benchmark's sample (listing
        # turns answered right 0.44 -> 0.22): they resemble any question on the topic. So they are
        # only added on request, apart (`abstract`: the reader's follow-ups about one paper).
        chosen = select_sentences(
            args.query, passages, ctx.embedder, args.sentences, vector, own_names(paper.title), paper.title
        )
        if args.abstract and paper.abstract:
            at = at or chunk_id(paper.paper_id, 0)
            abstract = readable_abstract(paper.abstract, (c.text for c in every))
            opening = abstract_sentences(
                args.query, paper.paper_id, abstract, at, ctx.embedder, args.abstract, chosen, vector
            )
            chosen = [*opening, *chosen]
        if asks_who(args.query) and paper.authors:
            chosen = [authors_sentence(paper.paper_id, chunk_id(paper.paper_id, 0), paper.authors), *chosen]
        return Passages(paper=paper, chunks=passages, sentences=chosen)


class AskPaperQuestion(Tool[QuestionInput, Answer]):
    name = "ask_paper_question"
    description = (
        "Answer a question from one paper's most relevant passages; returns the answer and the chunk "
        "ids used. If the answer is missing, increase k and try again."
    )
    input_model = QuestionInput

    def run(self, ctx: ToolContext, args: QuestionInput) -> Answer:
        if ctx.llm is None:
            raise ToolError("no language model is configured for reading papers")
        passages = InformationFromPaper().run(
            ctx, InformationInput(paper_id=args.paper_id, query=args.question, k=args.k)
        )
        context = "\n\n".join(f"[{c.chunk_id}] {c.text}" for c in passages.chunks)
        answer = complete(
            ctx.llm,
            "You answer questions about a research paper using only the passages given. "
            "If the passages do not contain the answer, say so in one sentence.",
            f"Paper: {passages.paper.title}\n\nPassages:\n{context}\n\nQuestion: {args.question}\nAnswer:",
            max_tokens=300,
        )
        return Answer(
            paper=passages.paper, answer=answer.strip(), passages=passages.chunk_ids(), read=passages.chunks
        )


OVERVIEW_PART_CHARS = 800  # of the abstract, the introduction's opening and the conclusions


def overview(paper: PaperRecord, texts: list[str]) -> str:
    """A whole paper in about 2,000 characters, without a model: its abstract, the opening of its
    introduction and its conclusions. A map-reduce summary by the local model took 10-20 minutes
    per paper on 2 cores; the answer is written from this instead, in seconds."""
    parts = []
    if paper.abstract:
        parts.append(f"Abstract: {shorten(paper.abstract, OVERVIEW_PART_CHARS)}")
    intro = next(
        (i for i, t in enumerate(texts[:6]) if "introduction" in t.lower()), 1 if len(texts) > 1 else 0
    )
    if texts:
        parts.append(f"Introduction: {shorten(texts[intro], OVERVIEW_PART_CHARS)}")
    tail = range(len(texts) - 1, max(intro, int(len(texts) * 0.5)), -1)
    ending = next(
        (i for i in tail if re.search(r"\b(conclusions?|discussion|summary)\b", texts[i], re.I)), None
    )
    if ending is not None and ending != intro:
        parts.append(f"Conclusions: {shorten(texts[ending], OVERVIEW_PART_CHARS)}")
    return "\n".join(parts)


class FullPaperSummary(Tool[SummaryInput, Summary]):
    name = "get_full_paper_summary"
    description = (
        "An overview of a whole paper: its abstract, the opening of its introduction and its "
        "conclusions. Use it when the user asks what a paper is about as a whole."
    )
    input_model = SummaryInput

    def run(self, ctx: ToolContext, args: SummaryInput) -> Summary:
        paper = known_paper(ctx, args.paper_id)
        with ctx.connect() as conn:
            # a summary written ahead of time (by a model, for this paper version) wins
            cached = summaries.get_summary(
                conn, paper.paper_id, paper.version, ctx.llm.name if ctx.llm else ""
            )
            if cached:
                return Summary(paper=paper, summary=cached, cached=True)
            texts = [t for _, _, t in papers.chunk_texts(conn, paper.paper_id)]
        return Summary(paper=paper, summary=overview(paper, texts), cached=False)
