"""SQL for the users/sessions table family, and password hashing (argon2id).

Session tokens are random; only their SHA-256 is stored. Each session carries its own CSRF token,
which state-changing requests must echo in a header."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime, timedelta
from uuid import UUID

import psycopg
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import BaseModel

_hasher = PasswordHasher()
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,40}$")
MIN_PASSWORD = 8
# Verifying against this keeps an unknown username as slow as a wrong password.
_DUMMY_HASH = _hasher.hash("not a password of anybody")


class User(BaseModel):
    user_id: UUID
    username: str


class Session(BaseModel):
    user: User
    csrf_token: str


class NewSession(Session):
    token: str  # goes into the cookie; never stored


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def create_user(conn: psycopg.Connection, username: str, password: str) -> User | None:
    """None when the name is taken (case-insensitively)."""
    try:
        row = conn.execute(
            "INSERT INTO users (username, password_hash) VALUES (%s, %s) RETURNING user_id, username",
            (username, _hasher.hash(password)),
        ).fetchone()
    except psycopg.errors.UniqueViolation:
        conn.rollback()
        return None
    return User(user_id=row[0], username=row[1])


def check_password(conn: psycopg.Connection, username: str, password: str) -> User | None:
    row = conn.execute(
        "SELECT user_id, username, password_hash FROM users WHERE lower(username) = lower(%s)", (username,)
    ).fetchone()
    try:
        _hasher.verify(row[2] if row else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    if row is None:
        return None
    if _hasher.check_needs_rehash(row[2]):
        conn.execute(
            "UPDATE users SET password_hash = %s WHERE user_id = %s", (_hasher.hash(password), row[0])
        )
    return User(user_id=row[0], username=row[1])


def create_session(conn: psycopg.Connection, user: User, days: int) -> NewSession:
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    conn.execute(
        "INSERT INTO sessions (token_hash, user_id, csrf_token, expires_at) VALUES (%s, %s, %s, %s)",
        (_digest(token), user.user_id, csrf, datetime.now(UTC) + timedelta(days=days)),
    )
    return NewSession(user=user, csrf_token=csrf, token=token)


def get_session(conn: psycopg.Connection, token: str) -> Session | None:
    row = conn.execute(
        "SELECT u.user_id, u.username, s.csrf_token FROM sessions s JOIN users u USING (user_id)"
        " WHERE s.token_hash = %s AND s.expires_at > now()",
        (_digest(token),),
    ).fetchone()
    if row is None:
        return None
    return Session(user=User(user_id=row[0], username=row[1]), csrf_token=row[2])


def delete_session(conn: psycopg.Connection, token: str) -> None:
    conn.execute("DELETE FROM sessions WHERE token_hash = %s OR expires_at <= now()", (_digest(token),))
