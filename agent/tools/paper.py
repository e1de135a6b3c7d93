"""Tools that read inside one paper: raw chunks, a question answered from its chunks, a summary."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent.llm.base import complete
from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, resolve_paper_id, shorten
from corpus import papers, summaries
from corpus.models import ChunkHit, PaperRecord


def _known_paper(ctx: ToolContext, paper_id: str) -> PaperRecord:
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


class QuestionInput(BaseModel):
    paper_id: str = Field(description="arXiv id of the paper, e.g. 1706.03762.")
    question: str = Field(description="The question to answer from the paper's text.")
    k: int = Field(4, ge=1, le=12, description="How many passages to read; increase it and retry if needed.")


class SummaryInput(BaseModel):
    paper_id: str = Field(description="arXiv id of the paper, e.g. 1706.03762.")


class Passages(ToolResult):
    paper: PaperRecord
    chunks: list[ChunkHit]

    def to_observation(self) -> str:
        head = f"From [arXiv:{self.paper.paper_id}] {self.paper.title}:"
        body = [f"({c.chunk_id}, page {c.page}) {shorten(c.text, 900)}" for c in self.chunks]
        return "\n".join([head, *body])

    def titles(self) -> dict[str, str]:
        return {self.paper.paper_id: self.paper.title}

    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in sorted(self.chunks, key=lambda c: -c.score)]


class Answer(ToolResult):
    paper: PaperRecord
    answer: str
    passages: list[str]  # chunk ids, most relevant first

    def to_observation(self) -> str:
        return (
            f"Answer from [arXiv:{self.paper.paper_id}] {self.paper.title} "
            f"(passages {', '.join(self.passages)}): {self.answer}"
        )

    def titles(self) -> dict[str, str]:
        return {self.paper.paper_id: self.paper.title}

    def chunk_ids(self) -> list[str]:
        return self.passages


class Summary(ToolResult):
    paper: PaperRecord
    summary: str
    cached: bool

    def to_observation(self) -> str:
        return f"Summary of [arXiv:{self.paper.paper_id}] {self.paper.title}: {self.summary}"

    def titles(self) -> dict[str, str]:
        return {self.paper.paper_id: self.paper.title}


class InformationFromPaper(Tool[InformationInput, Passages]):
    name = "get_information_from_paper"
    description = (
        "The passages of one paper most related to a query, with their chunk ids "
        "(use get_prior_context / get_subsequent_context with a chunk id to read around it)."
    )
    input_model = InformationInput

    def run(self, ctx: ToolContext, args: InformationInput) -> Passages:
        paper = _known_paper(ctx, args.paper_id)
        vector = ctx.embedder.embed_query(args.query)  # before taking a pooled connection
        with ctx.connect() as conn:
            hits = papers.search_chunks(conn, vector, k=args.k, paper_id=paper.paper_id)
        return Passages(paper=paper, chunks=sorted(hits, key=lambda c: c.seq))


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
        return Answer(paper=passages.paper, answer=answer.strip(), passages=passages.chunk_ids())


class FullPaperSummary(Tool[SummaryInput, Summary]):
    name = "get_full_paper_summary"
    description = (
        "A summary of a whole paper (map-reduce over all its text). Expensive: use it only when the "
        "user explicitly asks for a summary of a paper."
    )
    input_model = SummaryInput

    # ~6 chunks (~6000 characters) per map step keeps a small local model within its context.
    group_size = 6

    def run(self, ctx: ToolContext, args: SummaryInput) -> Summary:
        paper = _known_paper(ctx, args.paper_id)
        model_name = ctx.llm.name if ctx.llm else ""
        with ctx.connect() as conn:
            cached = summaries.get_summary(conn, paper.paper_id, paper.version, model_name)
            if cached:
                return Summary(paper=paper, summary=cached, cached=True)
            texts = [t for _, _, t in papers.chunk_texts(conn, paper.paper_id)]
        if ctx.llm is None:
            raise ToolError("no language model is configured for summarising papers")
        notes = []
        for i in range(0, len(texts), self.group_size):
            part = "\n".join(texts[i : i + self.group_size])
            notes.append(
                complete(
                    ctx.llm,
                    "Summarise this part of a research paper in 2-3 sentences: problem, method, results.",
                    f"Paper: {paper.title}\n\n{part}",
                    max_tokens=160,
                ).strip()
            )
        summary = complete(
            ctx.llm,
            "Combine these notes on the parts of one research paper into one summary of 4-6 sentences: "
            "the problem, the approach, the main results and why they matter.",
            f"Paper: {paper.title}\n\nNotes:\n" + "\n".join(f"- {n}" for n in notes),
            max_tokens=350,
        ).strip()
        with ctx.connect() as conn:
            summaries.put_summary(conn, paper.paper_id, paper.version, model_name, summary)
            conn.commit()
        return Summary(paper=paper, summary=summary, cached=False)
