"""`search` and `get_recent_papers`: papers for a query, from paper- and chunk-level vectors."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import psycopg
from pydantic import BaseModel, Field

from agent.coverage import defines, mentioned, names
from agent.named import quoted
from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, shorten
from corpus import papers
from corpus.models import PaperRecord


class SearchInput(BaseModel):
    query: str = Field(description="What the papers should be about, in plain words.")
    k: int = Field(5, ge=1, le=20, description="How many papers.")


class RecentInput(SearchInput):
    since: date | None = Field(None, description="Only papers published on or after this date (YYYY-MM-DD).")


class PaperList(ToolResult):
    papers: list[PaperRecord]
    scores: list[float]
    # paper -> its chunk closest to its title and abstract
    abstract_passages: dict[str, str] = Field(default_factory=dict)

    def to_observation(self) -> str:
        if not self.papers:
            return "No papers found. Try other words or a broader query."
        lines = []
        for p, score in zip(self.papers, self.scores, strict=True):
            authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
            when = p.published.date().isoformat() if p.published else "date unknown"
            lines.append(
                f"[arXiv:{p.paper_id}] {p.title} — {authors or 'authors unknown'} ({when}; "
                f"relevance {score:.2f})\n  {shorten(p.abstract or '(no abstract)', 300)}"
            )
        return "\n".join(lines)

    def records(self) -> list[PaperRecord]:
        return list(self.papers)

    def quotable(self) -> list[tuple[str, str]]:
        return [(p.paper_id, p.abstract) for p in self.papers if p.abstract]

    def chunk_ids(self) -> list[str]:
        """Where each listed paper says what the listing showed (its title and abstract)."""
        return [
            self.abstract_passages[p.paper_id] for p in self.papers if p.paper_id in self.abstract_passages
        ]


def _listing(conn, hits: list[tuple[PaperRecord, float]]) -> PaperList:
    listed = [p for p, _ in hits]
    return PaperList(
        papers=listed,
        scores=[s for _, s in hits],
        abstract_passages=papers.abstract_chunks(conn, [p.paper_id for p in listed]),
    )


def with_titled(
    conn: psycopg.Connection, query: str, hits: list[tuple[PaperRecord, float]]
) -> list[tuple[PaperRecord, float]]:
    """The listing led by the papers whose titles the query quotes. Asked of "'Attention Is All
    You Need'" and its label smoothing, the search ranked FlashAttention first and the paper
    named second: its words are every attention paper's."""
    titled = papers.titled_as(conn, quoted(query))
    if not titled:
        return hits
    listed = {p.paper_id: (p, score) for p, score in hits}
    top = max((score for _, score in hits), default=1.0)
    found = papers.get_papers(conn, [pid for pid in titled if pid not in listed])
    leading = [listed.get(pid) or (found[pid], top) for pid in titled if pid in listed or pid in found]
    return [*leading, *(h for h in hits if h[0].paper_id not in titled)][: len(hits) or len(leading)]


DEEPER = 20  # how far down the ranking a paper that introduces an asked name is looked for


def with_defining(
    conn: psycopg.Connection,
    vector: np.ndarray,
    args: SearchInput,
    hybrid: bool,
    hits: list[tuple[PaperRecord, float]],
) -> list[tuple[PaperRecord, float]]:
    """The listing, led by the paper that introduces a name the query asks about ("the best DPR
    model": "Our Dense Passage Retriever (DPR)") when one further down does and none of the
    papers listed even mentions it, or none of them introduces any name asked. Fusion ranks a
    paper near the top of every list above one first in two of three: for that question the DPR
    paper was the chunks' first, the words' third and the seventh fused, and the question was
    declined as not covered. With more papers in the corpus, RETRO (which names DPR 12 times,
    as a baseline), OPT, Primer, PaLM and the Transformer were listed and DPR's own paper was not."""
    listed = [p.paper_id for p, _ in hits]
    asked = names(args.query)
    if not asked:
        return hits
    texts: dict[str, str] = {}  # each paper's full text read once, and only when needed

    def text(pid: str) -> str:
        if pid not in texts:
            texts[pid] = " ".join(t for _, _, t in papers.chunk_texts(conn, pid))
        return texts[pid]

    missing = [name for name in asked if not mentioned(conn, listed, name)]
    if len(missing) < len(asked):
        # a name the listing holds but none of its papers introduces (a baseline it compares
        # with) is looked for further down too, unless the listing introduces another name asked
        # ("How does ViT compare with ResNet?" is the ViT paper's question)
        # (each listed paper's text read at most once: no per-paper mention query before it, whose
        # fallback read the same chunks; 190 searches took 5.9 s against 4.0 s before this rule)
        held = [name for name in asked if name not in missing]
        if not any(defines(text(pid), name) for pid in listed for name in held):
            missing += held
    if not missing:
        return hits
    deeper = papers.related_papers(conn, vector, k=DEEPER, lexical_text=args.query if hybrid else None)
    taken = set(listed)
    leading: list[tuple[PaperRecord, float]] = []
    for name in missing:
        for paper, score in deeper:
            pid = paper.paper_id
            if pid in taken or not paper.n_chunks:
                continue
            if defines(text(pid), name):
                leading.append((paper, score))
                taken.add(pid)
                break
    return [*leading, *hits][: args.k] if leading else hits


class Search(Tool[SearchInput, PaperList]):
    name = "search"
    description = (
        "Find the papers most related to a query: id, title, authors, date and abstract. "
        "Its output often suffices to answer; use the paper tools only when you need details."
    )
    input_model = SearchInput
    lists_papers = True

    def run(self, ctx: ToolContext, args: SearchInput) -> PaperList:
        if not args.query.strip():
            raise ToolError("the query is empty")
        vector = ctx.embedder.embed_query(args.query)  # before taking a pooled connection
        with ctx.connect() as conn:
            hits = papers.related_papers(
                conn, vector, k=args.k, lexical_text=args.query if ctx.hybrid else None
            )
            # the papers the query quotes by title lead: before a paper that introduces a name asked
            hits = with_titled(conn, args.query, with_defining(conn, vector, args, ctx.hybrid, hits))
            return _listing(conn, hits)


class RecentPapers(Tool[RecentInput, PaperList]):
    name = "get_recent_papers"
    description = (
        "Like search, but only recent papers, newest first. Use for 'latest', 'recent' or "
        "'new' work; `since` (YYYY-MM-DD) sets how recent, default the last two years of the corpus."
    )
    input_model = RecentInput
    lists_papers = True

    def run(self, ctx: ToolContext, args: RecentInput) -> PaperList:
        vector = ctx.embedder.embed_query(args.query)
        with ctx.connect() as conn:
            since = args.since
            if since is None:
                newest = papers.newest_published(conn)
                if newest is None:
                    return PaperList(papers=[], scores=[])
                since = newest.date().replace(year=newest.year - 2)
            start = datetime(since.year, since.month, since.day, tzinfo=UTC)
            hits = papers.related_papers(
                conn, vector, k=args.k, since=start, lexical_text=args.query if ctx.hybrid else None
            )
            return _listing(conn, hits)
