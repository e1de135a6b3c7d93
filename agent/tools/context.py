"""`get_prior_context` / `get_subsequent_context`: the neighbouring chunk in the same paper."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, parse_chunk_id
from corpus import papers
from corpus.models import ChunkHit


class ChunkInput(BaseModel):
    chunk_id: str = Field(description="A chunk id as shown by other tools, e.g. 1706.03762#12.")


class Neighbour(ToolResult):
    chunk: ChunkHit
    direction: str

    def to_observation(self) -> str:
        return f"{self.direction} passage ({self.chunk.chunk_id}, page {self.chunk.page}): {self.chunk.text}"

    def paper_ids(self) -> list[str]:
        return [self.chunk.paper_id]  # known from the step that showed the chunk id; no title here

    def chunk_ids(self) -> list[str]:
        return [self.chunk.chunk_id]

    def quotable(self) -> list[tuple[str, str]]:
        return [(self.chunk.paper_id, self.chunk.text)]


def _neighbour(ctx: ToolContext, chunk_id: str, step: int) -> ChunkHit:
    paper_id, seq = parse_chunk_id(chunk_id)
    with ctx.connect() as conn:
        if papers.get_chunk(conn, paper_id, seq) is None:
            raise ToolError(f"there is no chunk {chunk_id}")
        hit = papers.get_chunk(conn, paper_id, seq + step)
    if hit is None:
        where, nothing = ("first", "before") if step < 0 else ("last", "after")
        raise ToolError(f"{chunk_id} is the {where} chunk of the paper; there is nothing {nothing} it")
    return hit


class PriorContext(Tool[ChunkInput, Neighbour]):
    name = "get_prior_context"
    description = "The passage just before a given chunk in the same paper."
    input_model = ChunkInput

    def run(self, ctx: ToolContext, args: ChunkInput) -> Neighbour:
        return Neighbour(chunk=_neighbour(ctx, args.chunk_id, -1), direction="Previous")


class SubsequentContext(Tool[ChunkInput, Neighbour]):
    name = "get_subsequent_context"
    description = "The passage just after a given chunk in the same paper."
    input_model = ChunkInput

    def run(self, ctx: ToolContext, args: ChunkInput) -> Neighbour:
        return Neighbour(chunk=_neighbour(ctx, args.chunk_id, +1), direction="Next")
