"""What every tool is: a pydantic input model, a description the LLM reads, and a function that
returns a typed result with `to_observation()`. Tools never raise into the loop: problems are
`ToolError`s that the loop turns into observations the model can react to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

import psycopg
from pydantic import BaseModel

from agent.llm.base import ChatModel
from corpus import ids
from corpus.embedder import Embedder
from corpus.models import PaperRecord


class ToolError(Exception):
    """A problem the model should read and work around (unknown id, first chunk, ...)."""


class ToolResult(BaseModel):
    def to_observation(self) -> str:
        raise NotImplementedError

    def paper_ids(self) -> list[str]:
        """Papers this result shows, so answers may cite them."""
        return [record.paper_id for record in self.records()]

    def records(self) -> list[PaperRecord]:
        """The papers this result shows, in the order shown."""
        return []

    def chunk_ids(self) -> list[str]:
        """Passages this result shows, most relevant first: what a citation of the paper points at."""
        return []

    def quotable(self) -> list[tuple[str, str]]:
        """(paper id, text) the papers' own words this result holds, for quoting: never what a
        model wrote about them."""
        return []


@dataclass
class ToolContext:
    """What tools work with: pooled database connections, the embedder and the model."""

    connect: Callable[[], psycopg.Connection]
    embedder: Embedder
    llm: ChatModel | None = None
    hybrid: bool = True  # lexical matches fused with the vectors (settings.retrieval)


In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=ToolResult)


class Tool(Generic[In, Out]):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    # A listing shows papers by title and abstract; the other tools read inside a paper. An answer
    # that cites nothing names the papers read, and a citation points at a passage read if any.
    lists_papers: ClassVar[bool] = False

    def run(self, ctx: ToolContext, args: In) -> Out:
        raise NotImplementedError


def resolve_paper_id(text: str) -> str:
    """Any common form ('2301.01234v2', 'arXiv:2301.01234', 'cs/0112017', a local id) -> stored id."""
    pid = ids.stored_paper_id(text)
    if pid is None:
        raise ToolError(f"'{text.strip()}' is not an arXiv id (expected e.g. 1706.03762 or cs/0112017)")
    return pid


def parse_chunk_id(text: str) -> tuple[str, int]:
    parsed = ids.parse_chunk_id(text)
    if parsed is None:
        raise ToolError(f"'{text.strip()}' is not a chunk id (expected PAPER_ID#N, e.g. 1706.03762#12)")
    return parsed


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
