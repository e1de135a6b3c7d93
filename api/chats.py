"""Chats of the signed-in user, their messages, and sending a question (answered as an SSE stream).

Somebody else's chat answers 404, exactly like a chat that does not exist."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Header, HTTPException, Query, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from agent.level import LEVELS
from agent.llm.base import LLMError
from agent.session import ChatNotFound, QuestionNotFound
from api import exports
from api.auth import ActingUser, CurrentUser, State
from api.encodable import TextFile
from api.fields import Line, Text
from api.state import AppState
from api.turns import ChatBusy, ServerBusy, sse_response
from corpus import chats as chat_store

router = APIRouter(prefix="/api/chats", tags=["chats"])


class Pending(BaseModel):
    """The question being answered (saved with its answer, not before)."""

    content: str
    replaces: int | None = None


class ChatOut(BaseModel):
    chat_id: UUID
    title: str
    level: str | None
    created_at: datetime
    updated_at: datetime
    answering: bool = False
    pending: Pending | None = Field(None, description="While answering: the question; follow it at /stream.")


class NewChat(BaseModel):
    title: Line = Field("New chat", description="One line; control characters become spaces.")
    level: str | None = Field(None, description="BSc, MSc or PhD; unset: judged from the questions.")


class ChatChange(BaseModel):
    title: Line | None = None
    level: str | None = Field(
        None, description="BSc, MSc or PhD; null: auto, the next question's level is judged again."
    )


class MessageOut(BaseModel):
    message_id: int
    role: str
    content: str
    level: str | None
    steps: list[dict[str, Any]]
    citations: list[str]
    passages: dict[str, str]
    sources: list[dict[str, Any]] = []
    grounding: dict[str, Any] | None = None
    abstained: bool = False
    model: str | None = None
    seconds: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    stopped: bool = False
    created_at: datetime


class Messages(BaseModel):
    chat: ChatOut
    messages: list[MessageOut]


class Question(BaseModel):
    content: Text = Field(min_length=1)
    replaces: int | None = Field(
        None,
        ge=1,
        description="The message_id of one of this chat's questions: the new question takes its place "
        "(edit and resend; the same text again regenerates the answer). It and everything after it are "
        "deleted when the new answer is saved.",
    )


def _out(state: AppState, chat: chat_store.ChatInfo) -> ChatOut:
    turn = state.turns.running(chat.owner, chat.chat_id)
    pending = Pending(content=turn.question, replaces=turn.replaces) if turn else None
    return ChatOut(**chat.model_dump(), answering=turn is not None, pending=pending)


def _level(level: str | None) -> None:
    if level is not None and level not in LEVELS:
        raise HTTPException(422, f"level is one of {', '.join(LEVELS)}")


NEXT_CURSOR = "X-Next-Cursor"


def _cursor(chat: chat_store.ChatInfo) -> str:
    """Where the next page starts: after this chat (opaque to clients)."""
    raw = f"{chat.updated_at.isoformat()}~{chat.chat_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _after(cursor: str) -> tuple[datetime, UUID]:
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
        when, _, chat_id = raw.partition("~")
        at = datetime.fromisoformat(when)
        if at.tzinfo is None:
            raise ValueError("no time zone")
        return at, UUID(chat_id)
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors too
        raise HTTPException(422, f"before: not a cursor from the {NEXT_CURSOR} header") from None


@router.get(
    "",
    response_model=list[ChatOut],
    responses={200: {"headers": {NEXT_CURSOR: {"description": "`before` for the next page; absent on "
                                               "the last page", "schema": {"type": "string"}}}}},
)  # fmt: skip
def list_chats(
    user: CurrentUser,
    state: State,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=200, description="How many chats at most.")] = 50,
    before: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description=f"The {NEXT_CURSOR} of the previous page."),
    ] = None,
) -> list[ChatOut]:
    """The user's chats, most recently active first, a page at a time."""
    after = _after(before) if before is not None else None
    with state.db.pooled() as conn:
        found = chat_store.list_chats(conn, user.owner, limit=limit + 1, before=after)
    page = found[:limit]
    if len(found) > limit:
        response.headers[NEXT_CURSOR] = _cursor(page[-1])
    return [_out(state, c) for c in page]


@router.post("", response_model=ChatOut, status_code=status.HTTP_201_CREATED)
def create_chat(body: NewChat, user: ActingUser, state: State) -> ChatOut:
    _level(body.level)
    with state.db.pooled() as conn:
        return _out(state, chat_store.create_chat(conn, user.owner, body.title, body.level))


@router.patch("/{chat_id}", response_model=ChatOut)
def change_chat(chat_id: UUID, body: ChatChange, user: ActingUser, state: State) -> ChatOut:
    """Rename a chat and/or set the level its answers are written for."""
    _level(body.level)
    with state.db.pooled() as conn:
        if chat_store.get_chat(conn, chat_id, user.owner) is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chat")
        if body.title is not None:
            chat_store.rename_chat(conn, chat_id, user.owner, body.title)
        # Absent: unchanged; null: back to "auto". Only a sent field counts, so a client that
        # renames a chat does not reset its level.
        if "level" in body.model_fields_set:
            chat_store.set_level(conn, chat_id, body.level)
        chat = chat_store.get_chat(conn, chat_id, user.owner)
    return _out(state, chat)


@router.delete("/{chat_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_chat(chat_id: UUID, user: ActingUser, state: State) -> Response:
    with state.db.pooled() as conn:
        if not chat_store.delete_chat(conn, chat_id, user.owner):
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chat")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{chat_id}/messages", response_model=Messages)
def list_messages(chat_id: UUID, user: CurrentUser, state: State) -> Messages:
    """The chat's questions and answers (with steps, citations and cited passages)."""
    with state.db.pooled() as conn:
        chat = chat_store.get_chat(conn, chat_id, user.owner)
        if chat is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chat")
        saved = chat_store.messages(conn, chat_id)
    return Messages(chat=_out(state, chat), messages=[MessageOut(**m.model_dump()) for m in saved])


def _export(chat_id: UUID, user: CurrentUser, state: State, fmt: exports.Format) -> TextFile:
    with state.db.pooled() as conn:
        found = exports.load(conn, chat_id, user.owner)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chat")
    return TextFile(
        exports.render(found, fmt),
        media_type=exports.MEDIA_TYPES[fmt],
        headers={
            # the file name is ASCII by construction, so no quoting or RFC 5987 form is needed
            "Content-Disposition": f'attachment; filename="{exports.filename(found.chat, fmt)}"',
            "Cache-Control": "private, no-store",  # a person's conversation: no shared caches
        },
    )


_EXPORTED = {404: {"description": "no such chat (or somebody else's)"}}


@router.get(
    "/{chat_id}/export.md",
    response_class=TextFile,
    responses={200: {"content": {"text/markdown": {}}}, **_EXPORTED},
)
def export_markdown(chat_id: UUID, user: CurrentUser, state: State) -> TextFile:
    """The chat as a Markdown file: each question, the agent's steps, the answer, its sources with
    titles and arXiv links, and the model, time and tokens of each answer."""
    return _export(chat_id, user, state, "md")


@router.get(
    "/{chat_id}/export.bib",
    response_class=TextFile,
    responses={200: {"content": {"application/x-bibtex": {}}}, **_EXPORTED},
)
def export_bibtex(chat_id: UUID, user: CurrentUser, state: State) -> TextFile:
    """The papers the chat's answers cited, as BibTeX `@misc` entries (title, authors, year,
    arXiv eprint, primary class, URL), in the order they were first cited."""
    return _export(chat_id, user, state, "bib")


_STREAM = {
    "content": {"text/event-stream": {}},
    "description": "Server-Sent Events, one per agent event: `level`, `step_started`, `step_finished`, "
    "`token`, `final` (answer, citations, passages; `stopped` when it was stopped) or `error`, each "
    "with an `id:` (its number in the answer). The answer is saved when it is finished, even if the "
    "client has gone away.",
}


@router.post(
    "/{chat_id}/messages",
    response_class=StreamingResponse,
    responses={
        200: _STREAM,
        404: {"description": "no such chat, or `replaces` is not one of its questions"},
        409: {"description": "this chat is already being answered"},
        413: {"description": "the question is too long"},
        429: {"description": "too many questions; see Retry-After"},
        503: {"description": "no language model configured, database down, or server busy"},
    },
)
async def send_message(chat_id: UUID, body: Question, user: ActingUser, state: State) -> StreamingResponse:
    """Ask a question in this chat (or ask again in place of an earlier question: `replaces`);
    the agent's steps and answer stream back as SSE."""
    limit = state.settings.max_message_chars
    if len(body.content) > limit:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"a question has at most {limit} characters")
    if not body.content.strip():
        raise HTTPException(422, "the question is empty")
    try:
        service = state.chat_service()
    except LLMError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None
    wait = state.sends.hit(user.owner)
    if wait is not None:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"at most {state.settings.sends_per_minute} questions a minute",
            {"Retry-After": str(int(wait) + 1)},
        )
    question = body.content.strip()
    try:
        turn = state.turns.start(
            user.owner,
            chat_id,
            lambda stop: service.ask(chat_id, user.owner, question, stop=stop, replacing=body.replaces),
            question,
            body.replaces,
        )
    except ChatBusy:
        raise HTTPException(status.HTTP_409_CONFLICT, "this chat is still being answered") from None
    except ServerBusy:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "too many answers at once; try again soon",
            {"Retry-After": "5"},
        ) from None
    try:
        # The turn checks the chat is the user's while loading it: one trip to the database.
        await state.turns.first_event(turn)
    except ChatNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chat") from None
    except QuestionNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "replaces: no such question in this chat") from None
    return sse_response(turn)


def _own_chat(state: AppState, chat_id: UUID, owner: str) -> None:
    with state.db.pooled() as conn:
        if chat_store.get_chat(conn, chat_id, owner) is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chat")


@router.get(
    "/{chat_id}/stream",
    response_class=StreamingResponse,
    responses={
        200: _STREAM,
        204: {"description": "no answer is being written in this chat (the last one is saved)"},
        404: {"description": "no such chat"},
    },
)
async def follow_answer(
    chat_id: UUID,
    user: CurrentUser,
    state: State,
    last_event_id: Annotated[int | None, Header(ge=0, description="Resume after this event.")] = None,
) -> Response:
    """The answer being written in this chat: every event so far, then the rest as it comes. For
    a page opened again (or another tab) while the answer is still being written."""
    await run_in_threadpool(_own_chat, state, chat_id, user.owner)
    turn = state.turns.running(user.owner, chat_id)
    if turn is None:
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    return sse_response(turn, last_event_id or 0)


@router.post(
    "/{chat_id}/stop",
    status_code=status.HTTP_202_ACCEPTED,
    responses={404: {"description": "no such chat"}, 409: {"description": "no answer is being written"}},
)
def stop_answer(chat_id: UUID, user: ActingUser, state: State) -> dict[str, bool]:
    """Stop the answer being written in this chat: generation ends at its next token (or after
    the step it is in), and what was written is saved, marked stopped, as the stream's `final`."""
    _own_chat(state, chat_id, user.owner)
    if not state.turns.stop(user.owner, chat_id):
        raise HTTPException(status.HTTP_409_CONFLICT, "no answer is being written in this chat")
    return {"stopping": True}
