"""SQL for the chats/messages table family. An answer is saved from plain values: the store
knows nothing of the agent's events."""

from __future__ import annotations

import json
from datetime import datetime
from uuid import UUID

import psycopg
from pydantic import BaseModel

from corpus.text import storable, storable_json


class ChatInfo(BaseModel):
    chat_id: UUID
    owner: str
    title: str
    level: str | None
    allowed_papers: list[str]
    created_at: datetime
    updated_at: datetime


class MessageRecord(BaseModel):
    message_id: int
    role: str
    content: str
    level: str | None
    steps: list[dict]
    citations: list[str]
    passages: dict[str, str]
    sources: list[dict] = []
    grounding: dict | None = None
    abstained: bool = False
    tokens_in: int | None
    tokens_out: int | None
    model: str | None = None
    seconds: float | None = None
    stopped: bool = False
    created_at: datetime


# The owner of the terminal's chats, and of the web's in single-user mode (they are shared).
LOCAL_OWNER = "local"

_CHAT = "chat_id, owner, title, level, allowed_papers, created_at, updated_at"


def _chat(row: tuple) -> ChatInfo:
    return ChatInfo(
        chat_id=row[0],
        owner=row[1],
        title=row[2],
        level=row[3],
        allowed_papers=list(row[4]),
        created_at=row[5],
        updated_at=row[6],
    )


def create_chat(
    conn: psycopg.Connection, owner: str, title: str = "New chat", level: str | None = None
) -> ChatInfo:
    row = conn.execute(
        f"INSERT INTO chats (owner, title, level) VALUES (%s, %s, %s) RETURNING {_CHAT}",
        (owner, title, level),
    ).fetchone()
    return _chat(row)


def get_chat(conn: psycopg.Connection, chat_id: UUID | str, owner: str) -> ChatInfo | None:
    """None for an unknown chat and for somebody else's chat alike."""
    try:
        UUID(str(chat_id))
    except ValueError:
        return None
    row = conn.execute(
        f"SELECT {_CHAT} FROM chats WHERE chat_id = %s AND owner = %s", (chat_id, owner)
    ).fetchone()
    return _chat(row) if row else None


def list_chats(
    conn: psycopg.Connection,
    owner: str,
    limit: int | None = None,
    before: tuple[datetime, UUID] | None = None,
) -> list[ChatInfo]:
    """The owner's chats, most recently active first (ties: by chat id, so the order is total);
    at most `limit` of them, those after `before` (the updated_at and chat id of the last chat of
    the previous page)."""
    after = "AND (updated_at, chat_id) < (%s, %s)" if before else ""
    rows = conn.execute(
        f"SELECT {_CHAT} FROM chats WHERE owner = %s {after} ORDER BY updated_at DESC, chat_id DESC LIMIT %s",
        (owner, *(before or ()), limit),
    )
    return [_chat(r) for r in rows]


def rename_chat(conn: psycopg.Connection, chat_id: UUID, owner: str, title: str) -> bool:
    cur = conn.execute(
        "UPDATE chats SET title = %s, updated_at = now() WHERE chat_id = %s AND owner = %s",
        (title, chat_id, owner),
    )
    return cur.rowcount == 1


def delete_chat(conn: psycopg.Connection, chat_id: UUID, owner: str) -> bool:
    return conn.execute("DELETE FROM chats WHERE chat_id = %s AND owner = %s", (chat_id, owner)).rowcount == 1


def set_level(conn: psycopg.Connection, chat_id: UUID, level: str | None) -> None:
    """None: "auto" again, the next question's level is judged anew."""
    conn.execute("UPDATE chats SET level = %s WHERE chat_id = %s", (level, chat_id))


def messages(conn: psycopg.Connection, chat_id: UUID) -> list[MessageRecord]:
    rows = conn.execute(
        "SELECT message_id, role, content, level, steps, citations, passages, tokens_in, tokens_out,"
        " created_at, sources, grounding, abstained, model, seconds, stopped"
        " FROM messages WHERE chat_id = %s ORDER BY message_id",
        (chat_id,),
    ).fetchall()
    return [
        MessageRecord(
            message_id=r[0],
            role=r[1],
            content=r[2],
            level=r[3],
            steps=r[4],
            citations=list(r[5]),
            passages=r[6],
            tokens_in=r[7],
            tokens_out=r[8],
            created_at=r[9],
            sources=r[10],
            grounding=r[11],
            abstained=r[12],
            model=r[13],
            seconds=r[14],
            stopped=r[15],
        )
        for r in rows
    ]


class SavedAnswer(BaseModel):
    """What is stored of one answer (steps as JSON-ready dicts)."""

    content: str
    level: str
    steps: list[dict] = []
    citations: list[str] = []
    passages: dict[str, str] = {}
    sources: list[dict] = []
    grounding: dict | None = None
    abstained: bool = False
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: str
    forced: bool = False
    seconds: float | None = None
    stopped: bool = False  # the person stopped it: what was written so far


def save_turn(
    conn: psycopg.Connection,
    chat_id: UUID,
    question: str,
    answer: SavedAnswer,
    allowed_papers: set[str],
    title: str | None = None,
    replacing: int | None = None,
) -> tuple[int, int]:
    """Store the question and the answer of one turn in one transaction; returns their ids.
    Model output is made storable here: a NUL in an answer must not lose the whole turn.
    `replacing`: a question of this chat that the new turn replaces (edited and sent again, or
    regenerated); it and everything after it are deleted in the same transaction, so a turn that
    fails or is never finished loses nothing."""
    question, title = storable(question), storable(title) if title is not None else None
    answer = answer.model_copy(
        update={
            "content": storable(answer.content),
            "steps": storable_json(answer.steps),
            "citations": storable_json(answer.citations),
            "passages": storable_json(answer.passages),
            "sources": storable_json(answer.sources),
            "grounding": storable_json(answer.grounding),
            "model": storable(answer.model),
        }
    )
    with conn.transaction():
        if replacing is not None:
            conn.execute("DELETE FROM messages WHERE chat_id = %s AND message_id >= %s", (chat_id, replacing))
        asked = conn.execute(
            "INSERT INTO messages (chat_id, role, content, level) VALUES (%s, 'user', %s, %s)"
            " RETURNING message_id",
            (chat_id, question, answer.level),
        ).fetchone()
        row = conn.execute(
            "INSERT INTO messages (chat_id, role, content, level, steps, citations, passages, tokens_in,"
            " tokens_out, model, forced, sources, grounding, abstained, seconds, stopped)"
            " VALUES (%s, 'assistant', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " RETURNING message_id",
            (
                chat_id,
                answer.content,
                answer.level,
                json.dumps(answer.steps),
                answer.citations,
                json.dumps(answer.passages),
                answer.tokens_in,
                answer.tokens_out,
                answer.model,
                answer.forced,
                json.dumps(answer.sources),
                json.dumps(answer.grounding) if answer.grounding is not None else None,
                answer.abstained,
                answer.seconds,
                answer.stopped,
            ),
        ).fetchone()
        conn.execute(
            "UPDATE chats SET level = %s, allowed_papers = %s, updated_at = now(),"
            " title = CASE WHEN title = 'New chat' AND %s::text IS NOT NULL THEN %s ELSE title END"
            " WHERE chat_id = %s",
            (answer.level, sorted(allowed_papers), title, title, chat_id),
        )
    return int(asked[0]), int(row[0])


def delete_owner_chats(conn: psycopg.Connection, owner: str) -> int:
    """Every chat of `owner` (their messages go with them); how many there were."""
    return conn.execute("DELETE FROM chats WHERE owner = %s", (owner,)).rowcount
