"""SQL for the users/sessions table family. Callers hash: passwords arrive as argon2id hashes and
session tokens as their SHA-256, so nothing here ever sees a secret."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from uuid import UUID

import psycopg
from pydantic import BaseModel


def username_key(username: str) -> str:
    """The one canonical form of a username, for lookups, uniqueness and sign-in limits alike:
    control and format characters (zero-width, bidi) removed, NFKC, case folded. The database
    stores it (users.username_key, migration 011) and compares it as given: never with its own
    lower(), which differs from Python's for letters such as 'İ'."""
    visible = "".join(c for c in username if unicodedata.category(c) not in ("Cc", "Cf"))
    return unicodedata.normalize("NFKC", visible).casefold()


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
            "INSERT INTO users (username, username_key, password_hash) VALUES (%s, %s, %s)"
            " RETURNING user_id, username",
            (username, username_key(username), password_hash),
        ).fetchone()
    except psycopg.errors.UniqueViolation:
        conn.rollback()
        return None
    assert row is not None
    return User(user_id=row[0], username=row[1])


def credentials(conn: psycopg.Connection, username: str) -> tuple[User, str] | None:
    """The user of this name (case-insensitively) and their password hash."""
    row = conn.execute(
        "SELECT user_id, username, password_hash FROM users WHERE username_key = %s",
        (username_key(username),),
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
    """Remove the account (its sessions go with it; its chats are removed by the caller). By
    its exact name too: a look-alike that migration 011 left without a key can still be removed."""
    row = conn.execute(
        "DELETE FROM users WHERE username_key = %s OR username = %s RETURNING user_id, username",
        (username_key(username), username),
    ).fetchone()
    return User(user_id=row[0], username=row[1]) if row else None


def delete_sessions(conn: psycopg.Connection, user_id: UUID) -> None:
    """Sign the user out everywhere (after a password change)."""
    conn.execute("DELETE FROM sessions WHERE user_id = %s", (user_id,))


def recent_failures(conn: psycopg.Connection, key: str, seconds: float) -> int:
    """Failed sign-ins recorded for `key` within the last `seconds`."""
    row = conn.execute(
        "SELECT count(*) FROM sign_in_failures WHERE key = %s AND at > now() - make_interval(secs => %s)",
        (key, seconds),
    ).fetchone()
    return int(row[0]) if row else 0


def record_failure(conn: psycopg.Connection, keys: list[str], keep_seconds: float) -> None:
    """One failed sign-in on each key; rows older than `keep_seconds` go at the same time."""
    conn.execute("DELETE FROM sign_in_failures WHERE at < now() - make_interval(secs => %s)", (keep_seconds,))
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO sign_in_failures (key) VALUES (%s)", [(k,) for k in keys])
