"""Interview a paper from the page: one round per request (the journalist's question or the
person's own, then the author's answer from the paper's passages), streamed as SSE. The page keeps
the transcript and sends it back with each round, so the server holds no interview between rounds."""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from agent.interview import Exchange, PaperInterview, to_markdown
from agent.llm.base import LLMError
from agent.tools import ToolContext
from agent.tools.base import ToolError
from api.auth import ActingUser, CurrentUser, State
from api.encodable import TextFile
from api.fields import Text
from api.papers import paper_id_of
from api.turns import ChatBusy, ServerBusy, sse_response

router = APIRouter(prefix="/api/papers", tags=["interviews"])
log = logging.getLogger("chatpapers.api")


class InterviewRound(BaseModel):
    earlier: Annotated[list[Exchange], Field(max_length=20)] = []
    question: Text | None = Field(
        None, max_length=2000, description="Your own question; unset: the journalist asks."
    )
    level: Literal["BSc", "MSc", "PhD"] = "MSc"


class Transcript(BaseModel):
    exchanges: Annotated[list[Exchange], Field(max_length=20)]


def _slot(paper_id: str) -> uuid.UUID:
    """The runner's key for a person's interview of one paper (one round at a time per paper)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"chatpapers:interview:{paper_id}")


def _session(state, paper_id: str, level: str) -> PaperInterview:
    try:
        model = state.llm()
    except LLMError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None
    tools = ToolContext(connect=state.db.pooled, embedder=state.embedder, llm=model)
    try:
        return PaperInterview(tools, paper_id, level)
    except ToolError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


@router.post(
    "/{paper_id:path}/interview",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "`question` (asker, text), `token`s of the author's answer, then `answer` "
            "(the whole exchange: question, answer, the passages it was written from).",
        },
        404: {"description": "no such paper, or no text stored for it"},
        409: {"description": "a round of this interview is still running"},
    },
)
async def interview_round(
    paper_id: str, body: InterviewRound, user: ActingUser, state: State
) -> StreamingResponse:
    """One round of an interview of this paper: the journalist asks (or you do, with `question`),
    the author answers only from the paper's passages and cites them."""
    pid = paper_id_of(paper_id)
    wait = state.sends.hit(user.owner)
    if wait is not None:
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, "too many questions a minute",
                            {"Retry-After": str(int(wait) + 1)})  # fmt: skip
    session = await run_in_threadpool(
        _session, state, pid, body.level
    )  # a database query, maybe a model load
    own = body.question.strip() if body.question else None
    try:
        turn = state.turns.start(
            user.owner, _slot(pid), lambda stop: session.round(body.earlier, own, stop), own or ""
        )
    except ChatBusy:
        raise HTTPException(status.HTTP_409_CONFLICT, "a round of this interview is still running") from None
    except ServerBusy:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "too many answers at once; try again soon",
                            {"Retry-After": "5"}) from None  # fmt: skip
    try:
        # the first event is the question: the journalist's model call fails here, before any stream
        await state.turns.first_event(turn)
    except LLMError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None
    except ToolError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except Exception:
        log.exception("interview round failed for %s", pid)
        raise HTTPException(status.HTTP_500_INTERNAL_SERVER_ERROR, "the interview round failed") from None
    return sse_response(turn)


@router.post(
    "/{paper_id:path}/interview/stop",
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: {"description": "no round is running"}},
)
def stop_round(paper_id: str, user: ActingUser, state: State) -> dict[str, bool]:
    """Stop the round being written: the answer ends at its next token and is kept, marked stopped."""
    if not state.turns.stop(user.owner, _slot(paper_id_of(paper_id))):
        raise HTTPException(status.HTTP_409_CONFLICT, "no round of this interview is running")
    return {"stopping": True}


@router.post(
    "/{paper_id:path}/interview/transcript.md",
    response_class=TextFile,
    responses={200: {"content": {"text/markdown": {}}}, 404: {"description": "no such paper"}},
)
def transcript(paper_id: str, body: Transcript, user: CurrentUser, state: State) -> TextFile:
    """The interview as Markdown: each question (whose), the author's answer and its passages."""
    from corpus import papers

    pid = paper_id_of(paper_id)
    with state.db.pooled() as conn:
        paper = papers.get_paper(conn, pid)
    if paper is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such paper")
    name = "interview-" + "".join(c if c.isalnum() else "-" for c in pid) + ".md"
    return TextFile(
        to_markdown(paper, body.exchanges),
        media_type="text/markdown",
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "private, no-store",
        },
    )
