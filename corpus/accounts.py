"""SQL for the users/sessions table family. Callers hash: passwords arrive as argon2id hashes and
session tokens as their SHA-256, so nothing here ever sees a secret."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

import psycopg
from pydantic import BaseModel


class User(BaseModel):
    user_id: UUID
    username: str


class StoredSession(BaseModel):
    user: User
    csrf_token: str


def insert_user(conn: psycopg.Connection, username: str, password_hash: str) -> User | None:
    """None when the name is taken (case-insensitively)."""
    try:
        row = conn.execute(
            "INSERT INTO users (username, password_hash) VALUES (%s, %s) RETURNING user_id, username",
            (username, password_hash),
        ).fetchone()
    except psycopg.errors.UniqueViolation:
        conn.rollback()
        return None
    assert row is not None
    return User(user_id=row[0], username=row[1])


def credentials(conn: psycopg.Connection, username: str) -> tuple[User, str] | None:
    """The user of this name (case-insensitively) and their password hash."""
    row = conn.execute(
        "SELECT user_id, username, password_hash FROM users WHERE lower(username) = lower(%s)", (username,)
    ).fetchone()
    return (User(user_id=row[0], username=row[1]), row[2]) if row else None


def set_password_hash(conn: psycopg.Connection, user_id: UUID, password_hash: str) -> None:
    conn.execute("UPDATE users SET password_hash = %s WHERE user_id = %s", (password_hash, user_id))


def insert_session(
    conn: psycopg.Connection, token_hash: bytes, user_id: UUID, csrf_token: str, expires_at: datetime
) -> None:
    conn.execute(
        "INSERT INTO sessions (token_hash, user_id, csrf_token, expires_at) VALUES (%s, %s, %s, %s)",
        (token_hash, user_id, csrf_token, expires_at),
    )


def live_session(conn: psycopg.Connection, token_hash: bytes) -> StoredSession | None:
    row = conn.execute(
        "SELECT u.user_id, u.username, s.csrf_token FROM sessions s JOIN users u USING (user_id)"
        " WHERE s.token_hash = %s AND s.expires_at > now()",
        (token_hash,),
    ).fetchone()
    if row is None:
        return None
    return StoredSession(user=User(user_id=row[0], username=row[1]), csrf_token=row[2])


def delete_session(conn: psycopg.Connection, token_hash: bytes) -> None:
    """This session, and every expired one while we are at it."""
    conn.execute("DELETE FROM sessions WHERE token_hash = %s OR expires_at <= now()", (token_hash,))


def list_users(conn: psycopg.Connection) -> list[tuple[User, datetime]]:
    """Every account with its creation time, oldest first."""
    rows = conn.execute("SELECT user_id, username, created_at FROM users ORDER BY created_at, username")
    return [(User(user_id=r[0], username=r[1]), r[2]) for r in rows]


def delete_user(conn: psycopg.Connection, username: str) -> User | None:
    """Remove the account (its sessions go with it; its chats are removed by the caller)."""
    row = conn.execute(
        "DELETE FROM users WHERE lower(username) = lower(%s) RETURNING user_id, username", (username,)
    ).fetchone()
    return User(user_id=row[0], username=row[1]) if row else None


def delete_sessions(conn: psycopg.Connection, user_id: UUID) -> None:
    """Sign the user out everywhere (after a password change)."""
    conn.execute("DELETE FROM sessions WHERE user_id = %s", (user_id,))
